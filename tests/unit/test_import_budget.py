"""`groupctl --help` (and every command's --help) must stay cheap: the help path imports
typer and the cli modules that register commands, never the machinery behind them.

Checked as a module set, not a time (bench/startup.py measures the time): a fresh Python
runs the console script's entry point (groupctl.__main__.main) with the arguments, then
reports sys.modules. Every module under groupctl.cli registers its commands on that path,
so a heavy import at the top of any of them fails here; import it inside the command.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import groupctl.cli

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
    ["config", "--help"], ["config", "set-context", "--help"],
    ["force-rebalance", "--help"], ["wait", "--help"], ["remove-member", "--help"],
    ["analyze", "--help"],
    ["watch", "--help"],
]


def _heavy(modules: list[str]) -> list[str]:
    def heavy(name: str) -> bool:
        top, _, rest = name.partition(".")
        return top in HEAVY_PACKAGES or (top == "groupctl" and rest.split(".")[0] in HEAVY_GROUPCTL)

    return [name for name in modules if heavy(name)]


def _run(args: list[str]) -> tuple[subprocess.CompletedProcess, dict]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)],
                          capture_output=True, text=True, timeout=60, check=False)
    return proc, json.loads(proc.stderr.rstrip("\n").rsplit("\n", 1)[-1])


def test_the_filter_names_what_it_should():
    assert _heavy(["asyncio.events", "groupctl.client.cluster", "groupctl.cli.app", "typer",
                   "groupctl.lab", "yaml", "groupctl.configx"]) == [
        "asyncio.events", "groupctl.client.cluster", "groupctl.lab", "yaml"]


@pytest.mark.parametrize("args", HELP_PATHS, ids=" ".join)
def test_help_path_imports_nothing_heavy(args):
    proc, report = _run(args)
    assert report["code"] in (0, None), proc.stderr
    assert proc.stdout.strip(), "no help text"
    assert "groupctl.cli.app" in report["modules"]
    assert _heavy(report["modules"]) == []


def test_the_help_path_registers_every_command_module():
    """The checks above cover the whole app: every cli module that adds commands is
    imported on the help path."""
    cli_dir = Path(groupctl.cli.__file__).parent
    registering = sorted(f"groupctl.cli.{p.stem}" for p in cli_dir.glob("*.py")
                         if re.search(r"@app\.command|app\.add_typer", p.read_text()))
    assert "groupctl.cli.lab" in registering
    _, report = _run(["--help"])
    assert [m for m in registering if m not in report["modules"]] == []
