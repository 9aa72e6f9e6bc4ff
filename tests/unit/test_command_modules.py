"""cli.app.COMMAND_MODULES: a run that names a command registers only that command's
module, so the map must name, for every top-level command, the module that adds it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from groupctl.cli import app as cli_app

LIST_COMMANDS = """
import json, sys
from groupctl.cli import app
app._register_commands(sys.argv[1])
names = [c.name for c in app.app.registered_commands] + [g.name for g in app.app.registered_groups]
print(json.dumps(names))
"""


def _registered(command: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "_GROUPCTL_COMPLETE"}
    proc = subprocess.run([sys.executable, "-c", LIST_COMMANDS, command or ""], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(proc.stdout)


def test_every_command_is_mapped_to_the_module_that_adds_it():
    everything = _registered(None)
    assert sorted(everything) == sorted(cli_app.COMMAND_MODULES)
    for command in cli_app.COMMAND_MODULES:
        assert command in _registered(command)


@pytest.mark.parametrize("argv,expected", [
    (["describe", "g"], "describe"),
    (["-b", "h:1", "-o", "json", "describe", "g"], "describe"),
    (["--bootstrap-server=h:1", "--debug", "list"], "list"),
    (["--no-color", "lab", "up"], "lab"),
    (["-b", "h:1"], None),
    ([], None),
    (["--help"], "--help"),
])
def test_command_name(argv, expected):
    assert cli_app.command_name(argv) == expected
