"""The contexts file ($GROUPCTL_CONFIG, else ~/.config/groupctl/config.yaml; the command's
Env reads the variable and passes the path)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .bootstrap import parse_bootstrap
from .properties import load_properties, security_from_properties
from .security import SecurityConfig

CONTEXT_KEYS = ("bootstrap_servers", "command_config", "properties", "password_env",
                "password_file")


def config_path(override: str | None = None) -> Path:
    """`override` (the value of $GROUPCTL_CONFIG, as Env.config_path passes it), else the
    default location."""
    if override:
        return Path(override).expanduser()
    return Path.home() / ".config" / "groupctl" / "config.yaml"


@dataclass
class Context:
    name: str
    bootstrap_servers: list[str] | None = None
    command_config: str | None = None    # as written; resolved against the file's directory
    properties: dict[str, str] = field(default_factory=dict)
    base_dir: Path | None = None
    line: int | None = None
    property_lines: dict[str, str] = field(default_factory=dict, repr=False)  # "file, line N"
    password_env: str | None = None    # the SASL password's variable (credentials.py)
    password_file: str | None = None   # or its file

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
        from .credentials import context_password

        password = context_password(self.name, self.password_env, self.password_file,
                                    self.base_dir)
        if password is not None:
            props["sasl.password"] = (password, f"context {self.name!r}")
        return security_from_properties(props, source)

    def to_dict(self) -> dict:
        out: dict = {}
        if self.bootstrap_servers:
            out["bootstrap_servers"] = ",".join(self.bootstrap_servers)
        if self.command_config:
            out["command_config"] = self.command_config
        if self.properties:
            out["properties"] = dict(self.properties)
        for key in ("password_env", "password_file"):
            if getattr(self, key):
                out[key] = getattr(self, key)
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
    except RecursionError:  # PyYAML composes nested collections recursively
        raise UsageError(f"{p}: not valid YAML: nested too deeply") from None
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
        elif key in ("command_config", "password_env", "password_file"):
            setattr(ctx, key, _scalar(vnode, path, key))
        elif key == "properties":
            for pkey, (_, pnode) in _mapping(vnode, path, "properties").items():
                value = _scalar(pnode, path, f"property {pkey}")
                ctx.properties[pkey] = "" if value is None else value
                ctx.property_lines[pkey] = f"{path}, line {pnode.start_mark.line + 1}"
        else:
            raise UsageError(f"{where}: unknown key {key!r} in context {name!r} "
                             f"(expected {', '.join(CONTEXT_KEYS)})")
    return ctx
