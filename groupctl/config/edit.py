"""Editing the contexts file (`groupctl config ...`) without losing what a person wrote.

    doc = ContextsDocument.load()          # validated as commands read it (contexts.py)
    doc.set_context("prod", {"bootstrap_servers": "k1:9093"}, {"sasl.username": "alice"})
    doc.use("prod")
    doc.save()                             # atomic: temp file, fsync, rename

Edits go through ruamel.yaml's round-trip mode: comments, key order, quoting and flow
style of everything not touched stay as they were (PyYAML drops comments). The file is
checked with the same loader every command uses, before any edit and again before the
rename, so an edit never leaves a file that commands would refuse; on any error the old
file is untouched. A new file is created 0600 (in a 0700 directory when that is new too);
an existing file keeps its mode, and a file group or others can read draws a warning.
"""
from __future__ import annotations

import io
import os
import stat
import tempfile
from pathlib import Path

from ..errors import UsageError
from .contexts import config_path, load_contexts
from .credentials import MASK, mask_value

from .context_values import UNSET  # set_context value for a key: remove it


def permission_warning(path: Path) -> str | None:
    """A warning when `path` exists and group or others may read it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        return (f"{path} is readable by others (mode {stat.S_IMODE(mode):04o}); it may hold "
                f"credentials: chmod 600 {path}")
    return None


def _yaml():
    from ruamel.yaml import YAML

    y = YAML()  # round-trip
    y.preserve_quotes = True
    y.width = 4096  # never re-wrap long values (JAAS lines)
    return y


class ContextsDocument:
    """The contexts file as round-trip YAML data (see the module doc)."""

    def __init__(self, path: Path, doc, existed: bool):
        self.path = path
        self.doc = doc
        self.existed = existed

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> "ContextsDocument":
        from ruamel.yaml.comments import CommentedMap

        p = Path(path).expanduser() if path is not None else config_path()
        load_contexts(p)  # the loader's checks and messages (file, line) come first
        try:
            text = p.read_text(encoding="utf-8")
            existed = True
        except FileNotFoundError:
            text, existed = "", False
        try:
            doc = _yaml().load(text)
        except Exception as exc:  # ruamel's own errors; the loader above passed it
            raise UsageError(f"{p}: not valid YAML: {str(exc).splitlines()[0]}") from None
        return cls(p, doc if doc is not None else CommentedMap(), existed)

    # ---- reading ------------------------------------------------------------------------
    def contexts(self, create: bool = False):
        from ruamel.yaml.comments import CommentedMap

        ctxs = self.doc.get("contexts")
        if ctxs is None and create:
            ctxs = self.doc["contexts"] = CommentedMap()
        return ctxs if ctxs is not None else {}

    @property
    def current(self) -> str | None:
        value = self.doc.get("current_context")
        return None if value is None else str(value)

    def require(self, name: str):
        ctxs = self.contexts()
        if name not in ctxs:
            known = ", ".join(sorted(map(str, ctxs))) or "none defined"
            raise UsageError(f"no context {name!r} in {self.path} ({known})")
        return ctxs[name]

    # ---- editing ------------------------------------------------------------------------
    def use(self, name: str | None) -> None:
        if name is None:
            self.doc.pop("current_context", None)
            return
        self.require(name)
        if "current_context" in self.doc:
            self.doc["current_context"] = name
        else:  # first key, where a reader looks for it
            self.doc.insert(0, "current_context", name)

    def set_context(self, name: str, values: dict, properties: dict) -> bool:
        """Create or update context `name`: top-level keys (`values`) and `properties`;
        UNSET removes a key. True if the context is new."""
        from ruamel.yaml.comments import CommentedMap

        ctxs = self.contexts(create=True)
        created = name not in ctxs
        ctx = ctxs.get(name)
        if ctx is None:
            ctx = ctxs[name] = CommentedMap()
        _apply(ctx, values)
        if properties:
            props = ctx.get("properties")
            if props is None:
                props = ctx["properties"] = CommentedMap()
            _apply(props, properties)
            if not props:
                del ctx["properties"]
        return created

    def delete(self, name: str) -> bool:
        """Remove context `name`; True if it was the current one (then none is current)."""
        self.require(name)
        del self.contexts()[name]
        was_current = self.current == name
        if was_current:
            self.use(None)
        return was_current

    def rename(self, old: str, new: str) -> None:
        self.require(old)
        ctxs = self.contexts()
        if new in ctxs:
            raise UsageError(f"context {new!r} already exists in {self.path}")
        if not new:
            raise UsageError("a context name cannot be empty")
        position = list(ctxs).index(old)
        comments = ctxs.ca.items.pop(old, None)  # e.g. a comment line above the name
        value = ctxs.pop(old)
        ctxs.insert(position, new, value)  # same place, same comments
        if comments is not None:
            ctxs.ca.items[new] = comments
        if self.current == old:
            self.use(new)

    # ---- output -------------------------------------------------------------------------
    def text(self) -> str:
        buf = io.StringIO()
        _yaml().dump(self.doc, buf)
        return buf.getvalue()

    def masked_text(self) -> str:
        """The file as written with every secret masked and its comments left out (a
        comment may hold an old password: its text is the person's, unknown here)."""
        from copy import deepcopy

        copy = ContextsDocument(self.path, deepcopy(self.doc), self.existed)
        for ctx in copy.contexts().values():
            props = ctx.get("properties") if hasattr(ctx, "get") else None
            if not props:
                continue
            for key in list(props):
                props[key] = mask_value(str(key), props[key])
        _drop_comments(copy.doc)
        return copy.text() if copy.doc else ""

    def save(self) -> None:
        """Write atomically (see the module doc); the old file stays on any error."""
        target = Path(os.path.realpath(self.path))  # a symlinked config: write its target
        try:
            new_dir = not target.parent.exists()
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if new_dir:
                os.chmod(target.parent, 0o700)
            mode = stat.S_IMODE(os.stat(target).st_mode) if target.exists() else 0o600
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                       suffix=".tmp")  # created 0600
        except OSError as exc:
            raise UsageError(f"{target}: cannot write: {exc.strerror or exc}; "
                             "the file is unchanged") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(self.text())
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            load_contexts(tmp)  # what commands will read: never write what they refuse
            os.replace(tmp, target)
        except OSError as exc:  # a full disk, an I/O error: the old file stays as it was
            Path(tmp).unlink(missing_ok=True)
            raise UsageError(f"{target}: cannot write: {exc.strerror or exc}; "
                             "the file is unchanged") from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _drop_comments(node) -> None:
    """Every comment of a round-trip YAML tree removed, in place."""
    from ruamel.yaml.comments import CommentedBase

    if isinstance(node, CommentedBase):
        node.ca.comment = None
        node.ca.items.clear()
        node.ca.end = None
    if isinstance(node, dict):
        for value in node.values():
            _drop_comments(value)
    elif isinstance(node, list):
        for value in node:
            _drop_comments(value)


def _apply(mapping, values: dict) -> None:
    for key, value in values.items():
        if value is None:
            continue
        if value == UNSET:
            mapping.pop(key, None)
        else:
            mapping[key] = value


def masked_data(path: Path | None = None) -> dict:
    """The contexts file as plain data (for -o json/yaml), secrets masked."""
    ctxs = load_contexts(path)
    data = ctxs.to_dict()
    for ctx in data["contexts"].values():
        if "properties" in ctx:
            ctx["properties"] = {k: mask_value(k, v) for k, v in ctx["properties"].items()}
    return data


def summaries(path: Path | None = None) -> tuple[str | None, list[dict]]:
    """(current context, [one row per context]) for `config get-contexts`: name, bootstrap,
    security protocol, SASL mechanism and user, as far as the file (and its
    command_config, when readable) say; never a password."""
    ctxs = load_contexts(path)
    rows = []
    for name, ctx in ctxs.contexts.items():
        props = _known_properties(ctx)
        protocol = (props.get("security.protocol") or "PLAINTEXT").upper()
        sasl = protocol.startswith("SASL_")
        rows.append({
            "current": name == ctxs.current_context, "name": name,
            "bootstrap_servers": ",".join(ctx.bootstrap_servers or []) or None,
            "security_protocol": protocol,
            "sasl_mechanism": ((props.get("sasl.mechanism") or props.get("sasl.mechanisms")
                                or "").upper() or None) if sasl else None,
            "username": _username(props) if sasl else None,
        })
    return ctxs.current_context, rows


def _known_properties(ctx) -> dict[str, str]:
    from .properties import load_properties

    props: dict[str, str] = {}
    path = ctx.command_config_path()
    if path is not None:
        try:
            props.update({k: v for k, (v, _) in load_properties(path).items()})
        except UsageError:
            pass  # a listing shows what it can; a command using the context will say why
    props.update(ctx.properties)
    return props


def _username(props: dict[str, str]) -> str | None:
    if props.get("sasl.username"):
        return props["sasl.username"]
    from .properties import parse_jaas

    try:
        return parse_jaas(props.get("sasl.jaas.config") or "")[1].get("username")
    except ValueError:
        return None


__all__ = ["MASK", "UNSET", "ContextsDocument", "masked_data", "permission_warning",
           "summaries"]
