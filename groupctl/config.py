"""Client properties (`--command-config`) and contexts (`~/.config/groupctl/config.yaml`).

Properties files are read as java.util.Properties reads them (`key=value`, `key: value`
or `key value`; `#`/`!` comments; a line ending in an odd number of backslashes continues
on the next; \\t \\n \\uXXXX escapes), so the file given to Kafka's own tools works here.
What groupctl takes from them (everything else is ignored):

    security.protocol      PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL
    sasl.mechanism         PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (librdkafka: sasl.mechanisms)
    sasl.jaas.config       username="..." password="..." of PlainLoginModule/ScramLoginModule
    sasl.username, sasl.password          librdkafka's spelling (win over sasl.jaas.config)
    ssl.truststore.location + ssl.truststore.type=PEM, or ssl.ca.location (librdkafka),
    ssl.truststore.certificates           inline PEM
    ssl.keystore.location (type PEM: key and certificate chain in one file),
    ssl.keystore.certificate.chain + ssl.keystore.key (inline PEM),
    ssl.certificate.location + ssl.key.location (librdkafka), ssl.key.password
    ssl.endpoint.identification.algorithm  "" or none: no host name check (default https)
    enable.ssl.certificate.verification    false: no certificate check at all (librdkafka)

Contexts file (path from $GROUPCTL_CONFIG, else ~/.config/groupctl/config.yaml):

    current_context: prod
    contexts:
      prod:
        bootstrap_servers: kafka1:9093,kafka2:9093     # or a YAML list
        command_config: prod.properties                # relative to this file's directory
      lab:
        bootstrap_servers: 127.0.0.1:9092
        properties: {security.protocol: SASL_PLAINTEXT, sasl.mechanism: SCRAM-SHA-256,
                     sasl.username: alice, sasl.password: alice-secret}

`properties` override what `command_config` sets. Every problem in either file is a
UsageError (exit 2) naming the file and line.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
CONTEXT_KEYS = ("bootstrap_servers", "command_config", "properties")


@dataclass(frozen=True)
class SecurityConfig:
    """How to reach the brokers: TLS and SASL settings (PLAINTEXT when all None)."""

    protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None        # PEM file of trusted CAs (None: the system's)
    ssl_cadata: str | None = None        # the same, inline
    ssl_certfile: str | None = None      # client certificate chain (PEM; may hold the key)
    ssl_keyfile: str | None = None       # its private key (PEM)
    ssl_cert_pem: str | None = field(default=None, repr=False)  # inline chain
    ssl_key_pem: str | None = field(default=None, repr=False)   # inline key
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_check_hostname: bool = True
    ssl_verify: bool = True
    source: str | None = None            # the file it came from, for messages

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")


PLAINTEXT = SecurityConfig()


# ---- bootstrap servers ------------------------------------------------------------------

def parse_bootstrap(text: str | list | None, what: str = "--bootstrap-server") -> list[str]:
    """"h1:p1,h2:p2" (or a list of such strings) -> ["h1:p1", "h2:p2"]; IPv6 hosts in
    brackets ("[::1]:9092"). UsageError on an empty list, a missing host or port, or a port
    outside 1-65535."""
    items = text if isinstance(text, list) else [text or ""]
    out: list[str] = []
    for item in items:
        for part in str(item if item is not None else "").split(","):
            part = part.strip()
            if not part:
                continue
            host, port = split_host_port(part, what)
            out.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    if not out:
        raise UsageError(f"{what} is empty: give HOST:PORT[,HOST:PORT...]")
    return list(dict.fromkeys(out))  # duplicates once, order kept


def split_host_port(server: str, what: str = "--bootstrap-server") -> tuple[str, int]:
    """("host", port) of one "host:port"; UsageError when it is not one."""
    m = re.fullmatch(r"\[([0-9A-Fa-f:.%\w]+)\]:(\S*)|([^\s:\[\]/]+):(\S*)", server)
    if not m:
        if "//" in server:
            hint = "expected HOST:PORT, without a scheme"
        elif ":" not in server:
            hint = "a port is missing"
        elif server.count(":") > 1 and "[" not in server:
            hint = "write IPv6 addresses in brackets, [::1]:9092"
        else:
            hint = "expected HOST:PORT"
        raise UsageError(f"{what}: bad server {server!r}: {hint}")
    host = m.group(1) or m.group(3)
    port_text = m.group(2) if m.group(1) else m.group(4)
    if "/" in port_text:
        raise UsageError(f"{what}: bad server {server!r}: expected HOST:PORT, without a scheme")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise UsageError(f"{what}: bad server {server!r}: the port must be a number "
                         f"from 1 to 65535")
    return host, int(port_text)


# ---- properties files -------------------------------------------------------------------

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str, source: str = "properties") -> dict[str, tuple[str, int]]:
    """java.util.Properties syntax -> {key: (value, line number of the key)}; last wins."""
    out: dict[str, tuple[str, int]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i + 1
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        # a logical line: join continuations (odd number of trailing backslashes)
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        if _continues(line):
            line = line[:-1]
        key, value = _split_entry(line)
        key, value = _unescape(key, source, start), _unescape(value, source, start)
        if not key:
            raise UsageError(f"{source}, line {start}: a property without a name: {line.strip()!r}")
        out[key] = (value, start)
    return out


def _continues(line: str) -> bool:
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _split_entry(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def _unescape(s: str, source: str, line: int) -> str:
    if "\\" not in s:
        return s
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        if e == "u":
            digits = s[i + 2:i + 6]
            if not re.fullmatch(r"[0-9A-Fa-f]{4}", digits):
                raise UsageError(f"{source}, line {line}: malformed \\uXXXX escape "
                                 f"{s[i:i + 6]!r}")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(e, e))
            i += 2
    return "".join(out)


def load_properties(path: str | os.PathLike) -> dict[str, tuple[str, int]]:
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file (--command-config)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it: {exc}") from None
    return parse_properties(text, str(path))


_JAAS = re.compile(r"\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b(.*?);?\s*\Z",
                   re.DOTALL)
_JAAS_OPTION = re.compile(r'\s*([\w.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s";]+))', re.DOTALL)


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """(login module class, options) of a one-module sasl.jaas.config; ValueError if bad."""
    m = _JAAS.fullmatch(text)
    if not m:
        raise ValueError("expected '<LoginModule> required username=\"...\" password=\"...\";'")
    module, rest = m.group(1), m.group(3)
    options, pos = {}, 0
    while rest[pos:].strip():
        om = _JAAS_OPTION.match(rest, pos)
        if not om:
            raise ValueError(f"cannot read the options from {rest[pos:].strip()[:30]!r}")
        value = om.group(2) if om.group(2) is not None else om.group(3)
        options[om.group(1)] = re.sub(r"\\(.)", r"\1", value)
        pos = om.end()
    return module, options


def security_from_properties(props: dict, source: str = "properties") -> SecurityConfig:
    """A SecurityConfig from parsed properties ({key: value} or {key: (value, line)})."""

    def get(key: str) -> str | None:
        v = props.get(key)
        return v[0] if isinstance(v, tuple) else v

    def where(key: str) -> str:
        v = props.get(key)
        if isinstance(v, tuple):  # (value, line in `source`) or (value, "file, line N")
            return v[1] if isinstance(v[1], str) else f"{source}, line {v[1]}"
        return source

    def bad(key: str, message: str) -> UsageError:
        return UsageError(f"{where(key)}: {key}: {message}")

    protocol = (get("security.protocol") or "PLAINTEXT").strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise bad("security.protocol", f"{get('security.protocol')!r} is not one of "
                                        f"{', '.join(SECURITY_PROTOCOLS)}")
    kw: dict = {"protocol": protocol, "source": source}
    if protocol.startswith("SASL_"):
        mkey = "sasl.mechanism" if get("sasl.mechanism") is not None else "sasl.mechanisms"
        mech = (get(mkey) or "").strip().upper()
        if not mech:
            raise UsageError(f"{source}: security.protocol={protocol} needs sasl.mechanism "
                             f"({', '.join(SASL_MECHANISMS)})")
        if mech not in SASL_MECHANISMS:
            raise bad(mkey, f"{mech} is not supported by groupctl (it speaks "
                            f"{', '.join(SASL_MECHANISMS)})")
        user, password = get("sasl.username"), get("sasl.password")
        jaas = get("sasl.jaas.config")
        if jaas is not None and (user is None or password is None):
            try:
                module, options = parse_jaas(jaas)
            except ValueError as exc:
                raise bad("sasl.jaas.config", str(exc)) from None
            if "username" not in options or "password" not in options:
                raise bad("sasl.jaas.config", f"{module.rsplit('.', 1)[-1]} has no "
                                              "username and password options")
            user = options["username"] if user is None else user
            password = options["password"] if password is None else password
        if user is None or password is None:
            raise UsageError(f"{source}: SASL {mech} needs a username and password: "
                             "sasl.jaas.config, or sasl.username and sasl.password")
        kw.update(sasl_mechanism=mech, sasl_username=user, sasl_password=password)
    if protocol in ("SSL", "SASL_SSL"):
        kw.update(_ssl_settings(get, bad))
    return SecurityConfig(**kw)


def _ssl_settings(get, bad) -> dict:
    kw: dict = {}
    trust = get("ssl.truststore.location")
    if trust:
        ttype = (get("ssl.truststore.type") or "").strip().upper()
        if ttype not in ("", "PEM"):
            raise bad("ssl.truststore.type", f"{ttype} trust stores are not supported: convert "
                                             "to PEM (keytool -exportcert -rfc) and set "
                                             "ssl.truststore.type=PEM, or use ssl.ca.location")
        kw["ssl_cafile"] = trust
    if get("ssl.ca.location"):
        kw["ssl_cafile"] = get("ssl.ca.location")
    if get("ssl.truststore.certificates"):
        kw["ssl_cadata"] = get("ssl.truststore.certificates")
    keystore = get("ssl.keystore.location")
    if keystore:
        ktype = (get("ssl.keystore.type") or "").strip().upper()
        if ktype not in ("", "PEM"):
            raise bad("ssl.keystore.type", f"{ktype} key stores are not supported: use a PEM "
                                           "file with the key and certificate chain "
                                           "(ssl.keystore.type=PEM), or ssl.certificate.location "
                                           "and ssl.key.location")
        kw["ssl_certfile"] = keystore
    if get("ssl.certificate.location"):
        kw["ssl_certfile"] = get("ssl.certificate.location")
    if get("ssl.key.location"):
        kw["ssl_keyfile"] = get("ssl.key.location")
    if get("ssl.keystore.certificate.chain"):
        kw["ssl_cert_pem"] = get("ssl.keystore.certificate.chain")
    if get("ssl.keystore.key"):
        kw["ssl_key_pem"] = get("ssl.keystore.key")
    if kw.get("ssl_key_pem") and not kw.get("ssl_cert_pem"):
        raise bad("ssl.keystore.key", "needs ssl.keystore.certificate.chain too")
    password = get("ssl.key.password") or get("ssl.keystore.password")
    if password:
        kw["ssl_key_password"] = password
    algo = get("ssl.endpoint.identification.algorithm")
    if algo is not None:
        algo = algo.strip().lower()
        if algo in ("", "none"):
            kw["ssl_check_hostname"] = False
        elif algo != "https":
            raise bad("ssl.endpoint.identification.algorithm", f"{algo!r}: expected https or "
                                                               "an empty value")
    verify = get("enable.ssl.certificate.verification")
    if verify is not None:
        if verify.strip().lower() not in ("true", "false"):
            raise bad("enable.ssl.certificate.verification", "expected true or false")
        if verify.strip().lower() == "false":
            kw.update(ssl_verify=False, ssl_check_hostname=False)
    return kw


def load_command_config(path: str | os.PathLike) -> SecurityConfig:
    return security_from_properties(load_properties(path), str(path))


# ---- contexts ---------------------------------------------------------------------------

def config_path() -> Path:
    env = os.environ.get("GROUPCTL_CONFIG")
    return Path(env).expanduser() if env else Path.home() / ".config" / "groupctl" / "config.yaml"


@dataclass
class Context:
    name: str
    bootstrap_servers: list[str] | None = None
    command_config: str | None = None    # as written; resolved against the file's directory
    properties: dict[str, str] = field(default_factory=dict)
    base_dir: Path | None = None
    line: int | None = None
    property_lines: dict[str, str] = field(default_factory=dict, repr=False)  # "file, line N"

    def command_config_path(self) -> Path | None:
        if not self.command_config:
            return None
        p = Path(self.command_config).expanduser()
        return p if p.is_absolute() or self.base_dir is None else self.base_dir / p

    def security(self) -> SecurityConfig:
        props: dict = {}
        source = f"context {self.name!r}"
        path = self.command_config_path()
        if path is not None:
            props.update(load_properties(path))
            source = str(path)
        for key, value in self.properties.items():
            props[key] = (value, self.property_lines.get(key, f"context {self.name!r}"))
        return security_from_properties(props, source)

    def to_dict(self) -> dict:
        out: dict = {}
        if self.bootstrap_servers:
            out["bootstrap_servers"] = ",".join(self.bootstrap_servers)
        if self.command_config:
            out["command_config"] = self.command_config
        if self.properties:
            out["properties"] = dict(self.properties)
        return out


@dataclass
class ContextsFile:
    path: Path
    contexts: dict[str, Context] = field(default_factory=dict)
    current_context: str | None = None

    def get(self, name: str) -> Context:
        try:
            return self.contexts[name]
        except KeyError:
            known = ", ".join(sorted(self.contexts)) or "none defined"
            raise UsageError(f"no context {name!r} in {self.path} ({known})") from None

    def to_dict(self) -> dict:
        out: dict = {}
        if self.current_context is not None:
            out["current_context"] = self.current_context
        out["contexts"] = {n: c.to_dict() for n, c in self.contexts.items()}
        return out

    def save(self) -> None:
        import yaml

        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False))
        os.chmod(tmp, 0o600)  # it may hold SASL passwords
        tmp.replace(self.path)


def load_contexts(path: str | os.PathLike | None = None) -> ContextsFile:
    """The contexts file (an empty one when the file does not exist)."""
    import yaml

    p = Path(path).expanduser() if path is not None else config_path()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ContextsFile(p)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: cannot read it: {exc}") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f", line {mark.line + 1}" if mark else ""
        raise UsageError(f"{p}{line}: not valid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{p}: not valid YAML: {exc}") from None
    out = ContextsFile(p)
    if root is None:
        return out
    top = _mapping(root, p, "the file")
    for key, (knode, vnode) in top.items():
        if key == "current_context":
            out.current_context = _scalar(vnode, p, "current_context")
        elif key == "contexts":
            if _is_null(vnode):
                continue
            for name, (nnode, cnode) in _mapping(vnode, p, "contexts").items():
                out.contexts[name] = _context(name, nnode, cnode, p)
        else:
            raise UsageError(f"{p}, line {knode.start_mark.line + 1}: unknown key {key!r} "
                             "(expected current_context, contexts)")
    return out


def _is_null(node) -> bool:
    return node.tag == "tag:yaml.org,2002:null"


def _mapping(node, path: Path, what: str) -> dict:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise UsageError(f"{path}, line {node.start_mark.line + 1}: {what} must be a mapping")
    out = {}
    for knode, vnode in node.value:
        if not isinstance(knode, yaml.ScalarNode):
            raise UsageError(f"{path}, line {knode.start_mark.line + 1}: keys must be plain names")
        out[knode.value] = (knode, vnode)
    return out


def _scalar(node, path: Path, what: str) -> str | None:
    import yaml

    if not isinstance(node, yaml.ScalarNode):
        raise UsageError(f"{path}, line {node.start_mark.line + 1}: {what} must be a plain value")
    return None if _is_null(node) else str(node.value)


def _context(name: str, nnode, cnode, path: Path) -> Context:
    import yaml

    line = nnode.start_mark.line + 1
    ctx = Context(name, base_dir=path.parent, line=line)
    if _is_null(cnode):
        return ctx
    for key, (knode, vnode) in _mapping(cnode, path, f"context {name!r}").items():
        where = f"{path}, line {knode.start_mark.line + 1}"
        if key == "bootstrap_servers":
            if isinstance(vnode, yaml.SequenceNode):
                items = [_scalar(n, path, "a bootstrap server") or "" for n in vnode.value]
            else:
                items = [_scalar(vnode, path, "bootstrap_servers") or ""]
            try:
                ctx.bootstrap_servers = parse_bootstrap(items, "bootstrap_servers")
            except UsageError as exc:
                raise UsageError(f"{where}: context {name!r}: {exc}") from None
        elif key == "command_config":
            ctx.command_config = _scalar(vnode, path, "command_config")
        elif key == "properties":
            for pkey, (_, pnode) in _mapping(vnode, path, "properties").items():
                value = _scalar(pnode, path, f"property {pkey}")
                ctx.properties[pkey] = "" if value is None else value
                ctx.property_lines[pkey] = f"{path}, line {pnode.start_mark.line + 1}"
        else:
            raise UsageError(f"{where}: unknown key {key!r} in context {name!r} "
                             f"(expected {', '.join(CONTEXT_KEYS)})")
    return ctx
