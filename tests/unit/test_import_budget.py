"""`groupctl --help` (and every command's --help) must stay cheap: the help path imports
typer and the cli modules that register commands, never the machinery behind them.

Checked as a module set, not a time (bench/startup.py measures the time): a fresh Python
runs the console script's entry point (groupctl.__main__.main) with the arguments, then
reports sys.modules. Every module under groupctl.cli registers its commands on that path,
so a heavy import at the top of any of them fails here; import it inside the command.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Third-party packages and groupctl layers a help screen must not load.
HEAVY_PACKAGES = ("asyncio", "ssl", "yaml", "rich", "confluent_kafka", "scramp", "pyspark")
HEAVY_GROUPCTL = ("client", "protocol", "coordinator", "observe", "render", "lab", "analytics",
                  "config", "events")

PROBE = """
import json, sys
sys.argv = ["groupctl", *json.loads(sys.argv[1])]
from groupctl.__main__ import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""

HELP_PATHS = [
    ["--help"], ["-h"], ["--version"],
    ["list", "--help"], ["describe", "--help"], ["join", "--help"], ["demo", "--help"],
    ["lab", "--help"], ["lab", "up", "--help"], ["lab", "workload", "--help"],
    ["decode", "--help"], ["decode", "subscription", "--help"], ["errors", "--help"],
]


def _heavy(modules: list[str]) -> list[str]:
    out = []
    for name in modules:
        top, _, rest = name.partition(".")
        if top in HEAVY_PACKAGES:
            out.append(name)
        elif top == "groupctl" and rest.split(".")[0] in HEAVY_GROUPCTL:
            out.append(name)
    return out


@pytest.mark.parametrize("args", HELP_PATHS, ids=" ".join)
def test_help_path_imports_nothing_heavy(args):
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)],
                          capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stderr.rstrip("\n").rsplit("\n", 1)[-1])
    assert report["code"] in (0, None), proc.stderr
    assert proc.stdout.strip(), "no help text"
    assert "groupctl.cli.app" in report["modules"]
    assert _heavy(report["modules"]) == []


def test_the_help_path_registers_every_command_module():
    """The check above covers the whole app: all command modules are imported by it."""
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(["--help"])],
                          capture_output=True, text=True, timeout=60)
    modules = json.loads(proc.stderr.rstrip("\n").rsplit("\n", 1)[-1])["modules"]
    for name in ("offline", "lab", "demo", "join", "groups"):
        assert f"groupctl.cli.{name}" in modules
