"""Issue 21's full disk: `--record` (watch, join --watch) and `config set-context` on a
filesystem with no room left (a 64 KiB tmpfs of the test's own, filled). One line on stderr,
exit 2 naming the file; the old file intact, nothing half-written (the record keeps its old
bytes plus whole lines only; the config file is byte-identical, no temp file left); the
probe still leaves the group. Needs root for the mount; skipped, saying why, otherwise."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

PAGE = 4096  # tmpfs hands out whole pages


@pytest.fixture
def full_dir(tmp_path):
    where = tmp_path / "full"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)
        if os.path.ismount(where):
            subprocess.run(["umount", "-l", str(where)], check=False)


def fill(directory, free_in_last_page: int) -> None:
    """Take every free page of `directory`'s filesystem but `free_in_last_page` bytes in the
    page of the file written last (the caller's): a filler file grows until ENOSPC."""
    with open(directory / ".filler", "wb", buffering=0) as f:
        while True:
            try:
                f.write(b"\0" * PAGE)
            except OSError:
                break
    assert os.statvfs(directory).f_bavail == 0


def old_record(path, free_in_page: int = 100) -> bytes:
    """Whole ndjson lines filling the file's page but `free_in_page` bytes: the next event
    (~200 bytes) starts to fit, then the disk is full mid-line."""
    line = b'{"v": 1, "event": "old"}\n'
    body = line * ((PAGE - free_in_page) // len(line))
    path.write_bytes(body)
    return body


def _run(args: list[str], env_extra: dict | None = None, timeout: float = 120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUPCTL_")}
    env.update({"NO_COLOR": "1", **(env_extra or {})})
    return subprocess.run([sys.executable, "-m", "groupctl", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL,
                          check=False)


def assert_one_line(stderr: str, *words: str) -> None:
    # (watch's line naming its witnesses, --source auto, is said before: not an error)
    lines = [line for line in stderr.splitlines()
             if line.strip() and "watch: source auto:" not in line]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("groupctl: error:"), stderr
    for w in words:
        assert w in lines[0], stderr


def assert_old_plus_whole_lines(path, old: bytes) -> list[dict]:
    data = path.read_bytes()
    assert data.startswith(old), "the old record changed"
    rest = data[len(old):]
    assert rest == b"" or rest.endswith(b"\n"), f"half a line was left: {rest[-80:]!r}"
    return [json.loads(line) for line in rest.splitlines()]


@pytest.mark.broker
@pytest.mark.parametrize("command", ["watch", "join-watch"])
def test_record_on_a_full_disk(kafka, full_dir, topic_factory, command):
    group = f"full-{uuid.uuid4().hex[:8]}"
    if command == "watch":   # a watch tells a group once it exists: one that committed
        from describe_support import commit

        commit(kafka.bootstrap, group, {(topic_factory(1), 0): 0})
    record = full_dir / "events.ndjson"
    # the probe gets room for its first events (it has joined), then the disk is full
    room = {"watch": 100, "join-watch": 700}[command]  # ~2 events of the probe
    old = old_record(record, room)
    fill(full_dir, room)
    argv = {"watch": ["watch", group, "--interval", "0.2"],
            "join-watch": ["join", group, "--watch", "--yes"]}[command]
    proc = _run(["-b", kafka.bootstrap, "-o", "ndjson", *argv, "--duration", "60",
                 "--record", str(record)])
    assert proc.returncode == 2, proc.stderr
    assert_one_line(proc.stderr, f"--record {record}", "No space left on device")
    told = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    recorded = assert_old_plus_whole_lines(record, old)
    assert told[:len(recorded)] == recorded  # what the record kept was told, in order
    if command == "join-watch":  # the error ended the probe: it left the group
        assert any(e["event"] == "probe" and e.get("action") == "joined" for e in told), told
        out = kafka.consumer_group_command("--describe", "--group", group, "--members")
        text = out.stdout + out.stderr if hasattr(out, "stdout") else str(out)
        assert ("has no active members" in text or "does not exist" in text
                or f"Group {group} not found" in text), text


def test_set_context_on_a_full_disk(full_dir):
    config = full_dir / "config.yaml"
    env = {"GROUPCTL_CONFIG": str(config)}
    made = _run(["-b", "old:9092", "config", "set-context", "old", "--current"], env)
    assert made.returncode == 0, made.stderr
    before = config.read_bytes()
    fill(full_dir, 0)
    proc = _run(["-b", "new:9092", "config", "set-context", "new", "--current"], env)
    assert proc.returncode == 2, proc.stderr
    assert_one_line(proc.stderr, str(config), "No space left on device", "unchanged")
    assert config.read_bytes() == before
    assert sorted(p.name for p in full_dir.iterdir()) == [".filler", "config.yaml"]
    # and the file still works: the old context is current
    assert _run(["config", "current-context"], env).stdout.strip() == "old"


def test_analyze_out_on_a_full_disk(full_dir):
    """analyze --out's writing step (cli/analyze.py writes through replaced_atomically) with
    the real CSV and report writers, without starting Spark (too slow for the suite; the
    Parquet tables go into the same staging directory): the disk fills while the report
    (plotly inlined, megabytes) is written: exit-2 error naming --out, the old files
    byte-identical, no temp left."""
    from groupctl.analytics import load, report
    from groupctl.cli.outdir import replaced_atomically
    from groupctl.errors import UsageError

    out = full_dir / "analysis"
    out.mkdir()
    (out / "report.html").write_text("the old report")
    (out / "metrics.csv").write_text("group,rebalances\nold,1\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    fill(full_dir, 0)
    collected = {"episodes": [], "storms": [], "metrics": []}
    with pytest.raises(UsageError) as info, replaced_atomically(out) as staging:
        load.write_csv(staging / "metrics.csv", ["group", "rebalances"],
                       [{"group": "new", "rebalances": 2}])
        report.write_report(staging / "report.html", collected, "t")
    assert info.value.exit_code == 2
    assert str(info.value) == (f"--out {out}: cannot write: No space left on device; "
                               f"{out} is unchanged")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in full_dir.iterdir()) == [".filler", "analysis"]
