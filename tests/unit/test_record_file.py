"""RecordFile (--record): a write error is a UsageError naming the file (exit 2), and a
file that fails mid-line is cut back to its last whole line."""
from __future__ import annotations

import pytest

from groupctl.errors import UsageError
from groupctl.exitcodes import ExitCode
from groupctl.render.output import RecordFile


def test_dev_full_is_one_usage_error_naming_the_file():
    with RecordFile("/dev/full") as record, pytest.raises(UsageError) as info:
        record.write({"event": "x"})
    assert str(info.value) == "--record /dev/full: cannot write: No space left on device"
    assert info.value.exit_code == ExitCode.USAGE


def test_a_failed_write_leaves_only_whole_lines(tmp_path, monkeypatch):
    path = tmp_path / "r.ndjson"
    path.write_bytes(b'{"old": 1}\n')
    with RecordFile(str(path)) as record:
        record.write({"a": 1})
        real = record._file.write
        calls = []

        def short_then_full(data):  # the disk takes 5 bytes, then is full
            calls.append(len(data))
            if len(calls) == 1:
                return real(bytes(data[:5]))
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(record._file, "write", short_then_full, raising=False)
        with pytest.raises(UsageError, match="No space left on device"):
            record.write({"b": 2})
    assert path.read_bytes() == b'{"old": 1}\n{"a": 1}\n'


def test_an_unwritable_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot write"):
        RecordFile(str(tmp_path / "no" / "such" / "dir.ndjson"))


def test_after_a_failure_later_events_are_dropped_not_raised_again():
    """A probe's leave emits events after the record failed: they must not fail the leave."""
    with RecordFile("/dev/full") as record:
        with pytest.raises(UsageError):
            record.write({"event": "x"})
        record.write({"event": "probe", "action": "left"})  # no second error
