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
# code cache reads through it), records (frozen value records), startup, and the package itself (__version__).
SHARED = {"errors", "exitcodes", "events", "clock", "environment", "jvm_cds", "safe_files",
          "records", "__init__"}
ALLOWED: dict[str, set[str]] = {
    "protocol": {"safe_files", "records"},
    "safe_files": set(),
    "exitcodes": set(),
    "events": set(),
    "clock": {"records"},
    "records": set(),
    "environment": set(),
    "jvm_cds": {"safe_files"},
    "errors": {"exitcodes", "protocol"},
    "config": {"errors", "exitcodes", "records"},
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
# Inside observe/, the pipeline's folders: reads (the read model and the cluster reads every
# stage shares) and state (the reducer) stand on nothing else of observe; sources and the
# story use each other's vocabulary (the story is fed the sources' observations; the records'
# sources tell each group's past through a story); sinks read them all; the modules at the
# top (watch.py, wait.py: the pipelines put together) import any folder and no folder
# imports them.
OBSERVE_ALLOWED: dict[str, set[str]] = {
    "reads": set(),
    "state": set(),
    "sources": {"reads", "state", "story"},
    "story": {"reads", "state", "sources"},
    "sinks": {"reads", "state", "sources", "story"},
}
PACKAGE = Path(groupctl.__file__).parent


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """{module: every groupctl module it imports} from {module: (source, is_package)};
    function-level and TYPE_CHECKING imports count too. `from . import x` names module x
    when there is one."""
    out: dict[str, set[str]] = {}
    for name, (source, is_package) in sources.items():
        here = name.split(".") if is_package else name.split(".")[:-1]
        found: set[str] = set()
        tree = ast.parse(source)
        for node in ast.walk(tree):
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


def _observe_part(module: str) -> str:
    """The folder of observe/ a module is in, or the name of a module at its top."""
    return _layer(module, 2)


def _observe_name(part: str) -> str:
    return f"observe/{part}" if part in OBSERVE_ALLOWED else f"observe's top module {part}"


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
            elif mine == theirs == "observe":
                sub, tsub = _observe_part(importer), _observe_part(target)
                if sub in OBSERVE_ALLOWED and sub != tsub and tsub not in OBSERVE_ALLOWED[sub]:
                    bad.append(f"{importer} imports {target} (observe/{sub} may not "
                               f"import {_observe_name(tsub)})")
    return bad + cycles(sources)


def cycles(sources: dict[str, tuple[str, bool]]) -> list[str]:
    """Every import cycle between groupctl modules, TYPE_CHECKING imports included."""
    return [f"import cycle: {' -> '.join(cycle)}" for cycle in _cycles(module_imports(sources))]


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


def test_no_two_groupctl_modules_import_each_other():
    """A cycle counts every import: at module level, in a function, or under `if
    TYPE_CHECKING:` (one that runs only for a type checker still ties the two modules into
    one: neither can be read, moved or tested without the other)."""
    assert cycles(_package_sources()) == []


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
        "groupctl.observe.reads.r": ("from ..story import story\n", False),
        "groupctl.observe.sinks.s": ("from .. import watch\n", False),
        "groupctl.observe.story.story": ("", False),
        "groupctl.observe.watch": ("", False),
    }
    found = violations(sources)
    assert found == [
        "groupctl.analytics.x imports groupctl.cli (analytics may not import cli)",
        "groupctl.protocol.y imports groupctl.client (protocol may not import client)",
        "groupctl.coordinator.members.m imports groupctl.coordinator.driver "
        "(coordinator/members may not import coordinator/driver)",
        "groupctl.observe.reads.r imports groupctl.observe.story.story "
        "(observe/reads may not import observe/story)",
        "groupctl.observe.sinks.s imports groupctl.observe.watch "
        "(observe/sinks may not import observe's top module watch)",
        "import cycle: groupctl.client.c -> groupctl.client.d",
        "import cycle: groupctl.render.a -> groupctl.render.b",
    ]
