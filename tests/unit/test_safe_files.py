"""Files groupctl writes and the cache it runs code from (Kafka's jars, the JVMs' class-data
archives), against a neighbour who plants things (groupctl/safe_files.py): a shared cache
is refused, --record and
analyze --out never follow a symlink, a FIFO never hangs a command, a failed --out leaves
nothing behind."""
from __future__ import annotations

import io
import os
import stat
import threading

import pytest

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.errors import UsageError
from groupctl.render.output import RecordFile



def _cli(*argv: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(list(argv), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    monkeypatch.setenv("GROUPCTL_CACHE", str(root))
    return root


def test_a_cache_others_may_write_is_refused_before_any_command(cache):
    os.chmod(cache, 0o777)
    code, out, err = _cli("-b", "127.0.0.1:1", "list")
    assert (code, out) == (2, "")
    assert err == (f"groupctl: error: cache {cache}: groupctl runs code from its cache and is "
                   f"writable by its group and others (mode 0777; chmod go-w it, or remove "
                   f"it); set GROUPCTL_CACHE to a directory of your own\n")


def test_a_cache_owned_by_another_user_is_refused(cache, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 4242)
    code, _, err = _cli("-b", "127.0.0.1:1", "list")
    assert code == 2 and "is owned by uid" in err and "not by this user (uid 4242)" in err


def test_cache_directories_are_made_0700(cache):
    from groupctl import jvm_cds

    jvm_cds.options("test", ["x"])
    for d in (cache / "cds",):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d


def test_record_never_follows_a_symlink(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("someone else's\n")
    link = tmp_path / "shared" / "events.ndjson"
    link.parent.mkdir()
    link.symlink_to(victim)
    with pytest.raises(UsageError, match="events.ndjson: cannot write: is a symbolic link"):
        RecordFile(str(link))
    assert victim.read_text() == "someone else's\n"


@pytest.mark.parametrize("reader", [False, True])
def test_record_to_a_fifo_is_refused_at_once(tmp_path, reader):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    if reader:   # a reader that never reads: writes would block once the pipe is full
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    outcome: list = []

    def open_record() -> None:
        try:
            RecordFile(str(fifo)).close()
            outcome.append("opened")
        except UsageError as exc:
            outcome.append(str(exc))

    opener = threading.Thread(target=open_record, daemon=True)
    opener.start()
    opener.join(5)
    hung = opener.is_alive()
    if hung:   # the old open() waits for a reader: give it one, so the thread ends
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        opener.join(5)
    if reader:
        os.close(fd)
    assert not hung
    assert outcome == [f"--record {fifo}: cannot write: not a regular file"]


def test_a_new_record_file_is_0600_and_dev_null_still_works(tmp_path):
    path = tmp_path / "r.ndjson"
    with RecordFile(str(path)) as record:
        record.write({"a": 1})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with RecordFile("/dev/null") as record:
        record.write({"a": 1})


def test_analyze_out_through_a_symlink_is_refused(tmp_path):
    other = tmp_path / "other-report"
    other.mkdir()
    (other / "report.html").write_text("theirs")
    out = tmp_path / "out"
    out.symlink_to(other)
    events = tmp_path / "events.ndjson"
    events.write_text('{"event": "state", "group": "g", "state": "Stable"}\n')
    code, _, err = _cli("analyze", "--events", str(events), "--out", str(out))
    assert code == 2 and "is a symbolic link" in err
    assert (other / "report.html").read_text() == "theirs"


def test_a_symlink_inside_out_is_replaced_not_followed(tmp_path):
    from groupctl.cli.outdir import replaced_atomically

    other = tmp_path / "other"
    (other / "t").mkdir(parents=True)
    (other / "t" / "part").write_text("theirs")
    out = tmp_path / "out"
    out.mkdir()
    (out / "tables").symlink_to(other)
    (out / "report.html").symlink_to(other / "t" / "part")
    with replaced_atomically(out) as staging:
        (staging / "tables" / "t").mkdir(parents=True)
        (staging / "tables" / "t" / "part").write_text("ours")
        (staging / "report.html").write_text("ours")
    assert (other / "t" / "part").read_text() == "theirs"
    assert not (out / "tables").is_symlink() and not (out / "report.html").is_symlink()
    assert (out / "tables" / "t" / "part").read_text() == "ours"


def test_a_failed_analyze_leaves_no_empty_out_behind(tmp_path):
    from groupctl.cli.analyze import _writable_dir
    from groupctl.cli.outdir import replaced_atomically

    out = tmp_path / "new-out"
    _writable_dir(out)   # checked before Spark starts
    with pytest.raises(UsageError, match="is unchanged"):
        with replaced_atomically(out):
            raise OSError(28, os.strerror(28))
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_sparks_log4j_configuration_is_written_in_the_private_cache(cache):
    """It was /tmp/groupctl-spark-log4j2-UID-LEVEL.properties: a name any local user could
    take first (the JVM runs what a log4j configuration says)."""
    from groupctl.analytics.session import log4j_file

    path = log4j_file("error")
    assert path.parent == cache / "spark"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "rootLogger.level = error" in path.read_text()
    assert log4j_file("error") == path   # kept while its text is the same
