"""`sasl.jaas.config` read as Kafka's own JaasConfig reads it, and shown with its secrets
masked.

Kafka parses the value with java.io.StreamTokenizer set up as: bytes 0-32 whitespace;
`;` and `=` single-character tokens; `"` and `'` quotes (a quoted string ends at its
closing quote, a line end or the end; backslash escapes as in Java: \\n \\t \\b \\f \\r \\a
\\v, octal \\0-\\377, else the character itself); `/` starts a comment to the line's end
(`//` and `/* ... */` too); every other character up to 255, and all above, a word
character, except 129-159, each a token of its own with no text. An entry is
`<module> <flag> (<key>=<value>)* ;`, the flag any case of required, requisite,
sufficient or optional; a key or value is a word or a quoted string.
"""
from __future__ import annotations

from dataclasses import dataclass

_FLAGS = ("required", "requisite", "sufficient", "optional")
_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}
MASK = "REDACTED"
# option values shown as they are; every other option's value is masked (a password,
# PLAIN's broker-side user_NAME, OAuth's clientSecret, a token: any name may hold one)
SHOWN_OPTIONS = frozenset({
    "username", "serviceName", "principal", "keyTab", "useKeyTab", "storeKey",
    "useTicketCache", "debug", "clientId", "scope", "tokenauth"})


@dataclass(frozen=True)
class Token:
    kind: str          # "word", "quoted", "comment", or the single character (";", "=", ...)
    text: str | None   # a word's or quoted string's value; None for the others
    start: int         # its span in the source
    end: int


def _is_word(ch: str) -> bool:
    point = ord(ch)
    return (32 < point <= 128 and ch not in ";=/\"'") or point >= 160


def tokens(source: str):
    """The tokens of `source` as Kafka's tokenizer makes them, comments included (with
    their spans, so that a masked copy can leave them out)."""
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ord(ch) <= 32:
            i += 1
        elif ch == "/":
            if source.startswith("/*", i):
                end = source.find("*/", i + 2)
                end = n if end < 0 else end + 2
            else:   # `//` or a lone `/`: a comment to the line's end
                end = min((j for j in (source.find("\n", i), source.find("\r", i)) if j >= 0),
                          default=n)
            yield Token("comment", None, i, end)
            i = end
        elif ch in "\"'":
            start, i = i, i + 1
            out: list[str] = []
            while i < n and source[i] not in (ch, "\n", "\r"):
                c = source[i]
                if c == "\\" and i + 1 < n:
                    i, c = _escape(source, i + 1)
                else:
                    i += 1
                out.append(c)
            if i < n and source[i] == ch:
                i += 1
            yield Token("quoted", "".join(out), start, i)
        elif _is_word(ch):
            start = i
            while i < n and _is_word(source[i]):
                i += 1
            yield Token("word", source[start:i], start, i)
        else:
            yield Token(ch, None, i, i + 1)
            i += 1


def _escape(source: str, i: int) -> tuple[int, str]:
    """(the index after, the character) of the escape whose letter is at `i`."""
    c = source[i]
    if "0" <= c <= "7":
        digits = c
        limit = 3 if c <= "3" else 2
        while len(digits) < limit and i + len(digits) < len(source) \
                and "0" <= source[i + len(digits)] <= "7":
            digits += source[i + len(digits)]
        return i + len(digits), chr(int(digits, 8))
    return i + 1, _ESCAPES.get(c, c)


class JaasError(ValueError):
    pass


def entries(source: str) -> list[tuple[str, str, list[tuple[Token, Token]]]]:
    """[(module, flag, [(key token, value token)])], as Kafka's JaasConfig parses them;
    JaasError (never quoting a value: it may be a password) when Kafka would refuse it."""
    toks = [t for t in tokens(source) if t.kind != "comment"]
    out = []
    i = 0
    while i < len(toks):
        module = toks[i].text
        if module is None:
            raise JaasError("expected a login module class")
        if i + 1 >= len(toks) or (toks[i + 1].text or "").lower() not in _FLAGS:
            raise JaasError("expected a control flag (required, requisite, sufficient or "
                            "optional) after the login module")
        flag, i = (toks[i + 1].text or "").lower(), i + 2
        options: list[tuple[Token, Token]] = []
        while i < len(toks) and toks[i].kind != ";":
            key = toks[i]
            if (i + 2 >= len(toks) or toks[i + 1].kind != "=" or toks[i + 2].text is None
                    or key.text is None):
                after = f"after option {options[-1][0].text!r}" if options else \
                    "after the control flag"
                raise JaasError(f"cannot read the options {after} (expected name=\"value\" "
                                "... ;)")
            options.append((key, toks[i + 2]))
            i += 3
        if i >= len(toks):
            raise JaasError("the entry is not terminated by a semicolon")
        out.append((module, flag, options))
        i += 1
    if not out:
        raise JaasError("no login module")
    return out


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """(login module class, options) of a one-module sasl.jaas.config; ValueError if bad."""
    found = entries(text)
    if len(found) != 1:
        raise JaasError(f"expected one login module, found {len(found)}")
    module, _, options = found[0]
    return module, {k.text or "": v.text or "" for k, v in options}


def masked_jaas(text: str) -> str:
    """`text` with every option value but SHOWN_OPTIONS' replaced by "REDACTED" and its
    comments left out (a comment may hold an old password); the whole value masked when
    Kafka could not read it (what it would take as the password is unknown)."""
    try:
        found = entries(text)
    except JaasError:
        return f"{MASK} (not a JAAS configuration Kafka can read)"
    cuts = [(t.start, t.end, "") for t in tokens(text) if t.kind == "comment"]
    cuts += [(v.start, v.end, f'"{MASK}"') for _, _, options in found for k, v in options
             if k.text not in SHOWN_OPTIONS]
    out, at = [], 0
    for start, end, new in sorted(cuts):
        out.append(text[at:start] + new)
        at = end
    return "".join(out) + text[at:]
