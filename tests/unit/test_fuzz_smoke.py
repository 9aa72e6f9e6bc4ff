"""A short smoke of every fuzz harness (tests/fuzz; the long campaign is bench/fuzz.py):

- every seed of every harness runs in process without a crash (registry.Harness.check:
  only the documented error may come out);
- each harness runs under atheris (coverage-guided libFuzzer) over its seed corpus plus a
  few thousand mutated inputs, in a subprocess that must end with exit 0 (a crash or a
  hang ends libFuzzer with a non-zero exit and the input in the log);
- the registry covers what issue 21 asks to fuzz, and every harness has seeds.

All harnesses together take well under a minute on a loaded 2-core machine.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fuzz.registry import Crash, load

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = load()
REQUIRED = {"responses", "consumer", "contexts", "properties", "patterns", "cli",
            "batches", "coordinator", "segments"}


def test_registry_covers_issue_21():
    assert REQUIRED <= set(HARNESSES)
    for name, h in HARNESSES.items():
        assert h.seeds(), f"harness {name} has no seed corpus in {h.corpus}"


def test_committed_corpus_is_small():
    corpus = ROOT / "tests" / "fuzz" / "corpus"
    total = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file())
    assert total < 2 * 1024 * 1024, f"{total} bytes of seeds"


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_seeds_run_without_crash(name):
    h = HARNESSES[name]
    h.prepare()
    for seed_name, data in h.seeds():
        try:
            h.check(data)
        except Exception as exc:  # noqa: BLE001 - the message names the seed
            raise AssertionError(f"{name} seed {seed_name} crashes: "
                                 f"{type(exc).__name__}: {exc}") from exc


def test_crash_definition():
    """Undocumented exceptions propagate out of check(); the documented one does not."""
    from groupctl.protocol.types import DecodeError

    h = HARNESSES["consumer"]
    h.check(b"\x00\x00")  # a truncated subscription: DecodeError, swallowed
    with pytest.raises(DecodeError):
        h.one_input(b"\x00\x00")
    original = h.one_input
    try:
        h.one_input = lambda data: {}["no such key"]
        with pytest.raises(KeyError):
            h.check(b"")
    finally:
        h.one_input = original
    assert issubclass(Crash, AssertionError)


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_atheris_smoke(name, tmp_path):
    h = HARNESSES[name]
    cmd = [sys.executable, "-m", "tests.fuzz.run", name, f"-runs={h.smoke_runs}",
           "-max_total_time=40", f"-artifact_prefix={tmp_path}/", str(tmp_path / "corpus"),
           str(h.corpus)]
    (tmp_path / "corpus").mkdir()
    proc = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, errors="replace", timeout=120)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{name}: exit {proc.returncode}\n{log[-4000:]}"
    done = re.search(r"#(\d+)\s+DONE\s+cov: (\d+)", log)
    assert done, log[-2000:]
    assert int(done.group(1)) >= h.smoke_runs and int(done.group(2)) > 0, done.group(0)
