"""Imports run one way. The protocol layer: the generated message modules -> spec.py (the
Api) and wire.py (what generated codecs call) -> schema.py (the spec language). Every package: layers
import downward only (the rule is stated at ALLOWED below), and no two modules import each
other, also not through a function-level import."""
from __future__ import annotations

import ast
from pathlib import Path

import groupctl

PROTOCOL = Path(groupctl.__file__).parent / "protocol"


def _imported_modules(name: str) -> set[str]:
    tree = ast.parse((PROTOCOL / f"{name}.py").read_text())
    return {node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}


def test_the_spec_language_and_the_codecs_runtime_never_import_spec():
    for name in ("wire", "schema"):
        assert not {"spec", "messages"} & _imported_modules(name), name
    assert "spec" not in _imported_modules("consumer_codecs")
    assert {"wire", "schema"} <= _imported_modules("spec")


# ---- every package: layers import downward only ------------------------------------------
# The rule (ARCHITECTURE.md, docs/development/architecture.md): cli -> render -> coordinator -> observe -> client ->
# protocol, each layer importing only those below it. observe and coordinator sit side by
# side in the design; the probe tells its group's story through observe's story and
# describe, so coordinator may import observe and observe never imports coordinator.
# analytics imports only events and errors (it runs on Spark workers); config and lab sit
# where they are: config under client (client properties, TLS/SASL), lab beside cli (a
# local cluster, reached over client). The shared modules at the root: errors (its table
# comes from protocol.errors), exitcodes, events, clock, environment (the table of the
# variables groupctl reads), jvm_cds (class-data archives of the JVMs the lab and analyze
# start), safe_files (the checked cache and every file groupctl writes; the protocol layer's
# code cache reads through it), startup, and the package itself (__version__).
SHARED = {"errors", "exitcodes", "events", "clock", "environment", "jvm_cds", "safe_files",
          "__init__"}
ALLOWED: dict[str, set[str]] = {
    "protocol": {"safe_files"},
    "safe_files": set(),
    "exitcodes": set(),
    "events": set(),
    "clock": set(),
    "environment": set(),
    "jvm_cds": {"safe_files"},
    "errors": {"exitcodes", "protocol"},
    "config": {"errors", "exitcodes"},
    "client": {"protocol", "config"} | SHARED,
    "observe": {"client", "protocol", "config"} | SHARED,
    "coordinator": {"observe", "client", "protocol", "config"} | SHARED,
    "render": {"coordinator", "observe", "client", "protocol", "config"} | SHARED,
    "lab": {"client", "protocol", "config"} | SHARED,
    "analytics": {"events", "errors", "jvm_cds", "safe_files"},
    "startup": set(SHARED),
    "cli": {"render", "coordinator", "observe", "client", "protocol", "config", "lab",
            "analytics", "startup"} | SHARED,
    "__main__": {"cli", "startup"},
    "__init__": set(),
}
# Inside coordinator/: members (and assignors) know no driver; the driver knows members only
# through members/interface.py; the probe and the steering commands sit on the driver.
COORDINATOR_ALLOWED: dict[str, set[str]] = {
    "assignors": set(),
    "members": set(),
    "driver": {"members"},
    "probe": {"driver", "members", "assignors"},
    "steer": {"driver", "members"},
    "canary": {"driver", "members"},
    "__init__": set(),
}
PACKAGE = Path(groupctl.__file__).parent


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:` (imports a type checker reads only)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in ast.walk(child))
            continue
        yield node
        yield from _runtime_nodes(node)


def module_imports(sources: dict[str, tuple[str, bool]], *,
                   type_only: bool = True) -> dict[str, set[str]]:
    """{module: every groupctl module it imports} from {module: (source, is_package)};
    function-level imports count too, TYPE_CHECKING ones unless `type_only` is False (they
    obey the layers but do not run, so they make no cycle). `from . import x` names module
    x when there is one."""
    out: dict[str, set[str]] = {}
    for name, (source, is_package) in sources.items():
        here = name.split(".") if is_package else name.split(".")[:-1]
        found: set[str] = set()
        tree = ast.parse(source)
        for node in (ast.walk(tree) if type_only else _runtime_nodes(tree)):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "groupctl"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[:len(here) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "groupctl":
                    continue
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in sources]
                found |= set(subs) if subs and len(subs) == len(node.names) else {target}
        out[name] = found - {name}
    return out


def _layer(module: str, depth: int) -> str:
    parts = module.split(".")
    return parts[depth] if len(parts) > depth else "__init__"


def violations(sources: dict[str, tuple[str, bool]]) -> list[str]:
    """Every import against the layer rules above, and every import cycle between modules."""
    imports = module_imports(sources)
    bad = []
    for importer, targets in imports.items():
        mine = _layer(importer, 1)
        for target in targets:
            theirs = _layer(target, 1)
            if theirs != mine and theirs not in ALLOWED.get(mine, set()):
                bad.append(f"{importer} imports {target} ({mine} may not import {theirs})")
            elif mine == theirs == "coordinator":
                sub, tsub = _layer(importer, 2), _layer(target, 2)
                if sub != tsub and tsub not in COORDINATOR_ALLOWED.get(sub, set()):
                    bad.append(f"{importer} imports {target} (coordinator/{sub} may not "
                               f"import coordinator/{tsub})")
    bad += [f"import cycle: {' -> '.join(cycle)}"
            for cycle in _cycles(module_imports(sources, type_only=False))]
    return bad


def _cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(imports.get(v, ())):
            if w not in imports:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(imports):
        if v not in index:
            visit(v)
    return found


def _package_sources() -> dict[str, tuple[str, bool]]:
    return {_module_name(p, PACKAGE): (p.read_text(), p.name == "__init__.py")
            for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_package_imports_only_downward_and_no_module_cycles():
    assert violations(_package_sources()) == []


def test_the_import_check_catches_violations():
    """Self-test: a known violation of each kind is reported (so the check above can fail)."""
    sources = {
        "groupctl.analytics.x": ("from ..cli import app\n", False),
        "groupctl.protocol.y": ("def f():\n    from groupctl.client import cluster\n", False),
        "groupctl.coordinator.members.m": ("from ..driver import member_driver\n", False),
        "groupctl.render.a": ("from .b import x\n", False),
        "groupctl.render.b": ("def f():\n    from . import a\n", False),
        "groupctl.client.c": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from .d import D\n", False),
        "groupctl.client.d": ("from .c import C\n", False),
        "groupctl.observe.ok": ("from ..client import routes\nfrom ..events import Event\n",
                                False),
    }
    found = violations(sources)
    assert found == [
        "groupctl.analytics.x imports groupctl.cli (analytics may not import cli)",
        "groupctl.protocol.y imports groupctl.client (protocol may not import client)",
        "groupctl.coordinator.members.m imports groupctl.coordinator.driver "
        "(coordinator/members may not import coordinator/driver)",
        "import cycle: groupctl.render.a -> groupctl.render.b",
    ]
