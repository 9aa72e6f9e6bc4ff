"""Shell completion through groupctl's dynamic completion (what the scripts in
completions/ run on TAB): option values and global options after the command, no broker
needed."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from groupctl.cli.complete import completion_args

OUTPUTS = ["table", "wide", "json", "yaml", "ndjson"]


def _bash(line: str) -> list[str]:
    """What bash gets for the cursor at the end of `line` (a trailing space: a new word)."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    env = dict(os.environ, _GROUPCTL_COMPLETE="complete_bash", COMP_WORDS=line,
               COMP_CWORD=str(cword))
    proc = subprocess.run([sys.executable, "-m", "groupctl"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout.split()


def _zsh(line: str) -> list[str]:
    env = dict(os.environ, _GROUPCTL_COMPLETE="complete_zsh", _TYPER_COMPLETE_ARGS=line)
    proc = subprocess.run([sys.executable, "-m", "groupctl"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return re.findall(r'"([^"]*)"', proc.stdout)  # _arguments '*: :(("yaml"))'



@pytest.mark.parametrize("line", ["groupctl -o ", "groupctl --output ",
                                  "groupctl describe g -o ", "groupctl lab status -o "])
def test_output_formats_complete_anywhere_on_the_line(line):
    assert _bash(line) == OUTPUTS


def test_output_formats_complete_by_prefix_in_bash_and_zsh():
    assert _bash("groupctl list -o j") == ["json"]
    assert _zsh("groupctl describe g -o y") == ["yaml"]


def test_global_options_after_the_command_keep_the_command_context():
    assert _bash("groupctl list -o json --st") == ["--state"]
    assert "--name" in _bash("groupctl lab up -o json --n")


@pytest.mark.parametrize("args,expected", [
    (["describe", "g", "-o"], ["-o"]),
    (["describe", "-b", "h:1", "g"], ["-b", "h:1", "describe", "g"]),
    (["--output=json", "list"], ["--output=json", "list"]),
    (["list", "--no-color"], ["--no-color", "list"]),
    ([], []),
])
def test_completion_args(args, expected):
    assert completion_args(args) == expected


def test_watch_views_complete():
    assert _bash("groupctl watch --all --view ") == ["auto", "top", "full"]
    assert _bash("groupctl watch --all --view t") == ["top"]


def test_watch_sources_and_lab_names_complete(tmp_path, monkeypatch):
    assert _bash("groupctl watch g --source ") == ["auto", "describe", "records"]
    assert _bash("groupctl watch g --source r") == ["records"]
    for name in ("default", "mine", "other"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "state.json").write_text("{}")
    (tmp_path / "not-a-lab").mkdir()
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(tmp_path))
    assert _bash("groupctl lab status --name ") == ["default", "mine", "other"]
    assert _bash("groupctl lab workload --group g --topic t --name m") == ["mine"]
    assert _bash("groupctl lab down --name o") == ["other"]
