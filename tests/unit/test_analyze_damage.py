"""analyze's damaged .gz inputs (analytics/damage.py), without Spark: what is said about
each kind of damage, and the copy Spark reads instead holds exactly the text zlib gives
before the damage (as `zcat` would). And a Spark failure said in one line
(session.spark_failure). The runs on Spark: tests/analytics/test_analyze_damaged.py."""
from __future__ import annotations

import gzip
import io
import random
import types

import pytest
from gzip_oracle import zcat_text

from groupctl.analytics import damage
from groupctl.analytics.pipeline import Inputs
from groupctl.analytics.session import spark_failure

# a log's worth of lines, not very compressible (random member ids), ~300 KB
rng = random.Random(7)
TEXT = b"".join(f"[2026-11-24 10:{i // 60 % 60:02d}:{i % 60:02d},{i % 1000:03d}] INFO "
                f"[GroupCoordinator 1]: member-{rng.getrandbits(64):x} joined group g{i % 7} "
                f"(kafka.coordinator.group.GroupCoordinator)\n".encode() for i in range(3000))
WHOLE = gzip.compress(TEXT, mtime=0)


def _said(data: bytes) -> tuple[str | None, bytes]:
    copy = io.BytesIO()
    return damage.gzip_damage(io.BytesIO(data), copy), copy.getvalue()


def test_whole_files_are_whole():
    assert _said(WHOLE) == (None, TEXT)
    # several members (cat a.gz b.gz), and members of nothing at all
    assert _said(WHOLE + gzip.compress(b"more\n")) == (None, TEXT + b"more\n")
    assert _said(gzip.compress(b"") + WHOLE) == (None, TEXT)


@pytest.mark.parametrize("cut", [10, 2000, len(WHOLE) // 2, len(WHOLE) - 1])
def test_a_file_cut_short_gives_the_text_up_to_the_cut(cut):
    what, copy = _said(WHOLE[:cut])
    assert copy == zcat_text(WHOLE[:cut]) and TEXT.startswith(copy)
    assert what == (f"cut short after {len(copy):,} bytes of text (its gzip data ends "
                    f"early): the lines up to there are read")
    if cut > len(WHOLE) // 2:
        assert len(copy) > len(TEXT) // 3


def test_bytes_that_are_not_gzip_give_nothing():
    assert _said(b"[2026-11-24 10:00:00,000] INFO plain text named .gz\n") == \
        ("not gzip (nothing read from it)", b"")
    assert _said(b"\x1f") == ("not gzip (nothing read from it)", b"")


def test_bytes_after_the_end_are_said_and_the_text_is_whole():
    assert _said(WHOLE + b"\0" * 1000) == \
        ("1,000 byte(s) after the end of its gzip data (ignored)", TEXT)
    assert _said(WHOLE + b"trailing text\n") == \
        ("14 byte(s) after the end of its gzip data (ignored)", TEXT)


def test_a_changed_checksum_gives_the_whole_text():
    data = bytearray(WHOLE)
    data[-6] ^= 0xFF   # the CRC-32 in the trailer
    assert _said(bytes(data)) == (
        f"its CRC-32 does not match its {len(TEXT):,} bytes of text (bytes changed "
        f"somewhere): read whole, a line may be wrong", TEXT)
    data = bytearray(WHOLE)
    data[-2] ^= 0xFF   # ISIZE
    assert _said(bytes(data))[0].startswith("its length does not match")


def test_damage_in_the_middle_gives_the_text_before_it():
    # a header byte of the deflate stream made invalid: zlib stops at once; and a run of
    # bytes overwritten in the middle: it stops somewhere after them, or the CRC says so
    for at, junk in ((10, b"\xff"), (len(WHOLE) // 2, b"\xff" * 64)):
        data = WHOLE[:at] + junk + WHOLE[at + len(junk):]
        what, copy = _said(data)
        assert copy == zcat_text(data), at
        assert what.startswith((f"damaged after {len(copy):,} bytes of text (",
                                "its CRC-32 does not match")), what


def test_check_reads_local_gz_files_only(tmp_path):
    (tmp_path / "whole.log.gz").write_bytes(WHOLE)
    (tmp_path / "cut.log.gz").write_bytes(WHOLE[:500])
    (tmp_path / "plain.log").write_bytes(b"\x1f\x8b not gzip, not named .gz")
    paths = [str(tmp_path / n) for n in ("whole.log.gz", "cut.log.gz", "plain.log")]
    found = damage.in_background([*paths, "hdfs://nn/cut.log.gz",
                                  str(tmp_path / "gone.gz"), paths[1]]).result(timeout=30)
    assert [p for p, _ in found] == [paths[1]]
    copies = damage.salvage(found, tmp_path / "copies")
    assert list(copies.values()) == [paths[1]]
    (copy,) = copies
    assert copy == str(tmp_path / "copies" / "0" / "cut.log")
    assert open(copy, "rb").read() == zcat_text(WHOLE[:500])


def test_inputs_read_the_copies_in_place_of_the_originals():
    inputs = Inputs(["/l/a.gz", "/l/b.log"], ["/c/a.gz"], ["/e/r.ndjson.gz"])
    read = inputs.reading({"/t/0/a": "/l/a.gz", "/t/1/r.ndjson": "/e/r.ndjson.gz"})
    assert (read.broker_logs, read.client_logs, read.events) == \
        (["/t/0/a", "/l/b.log"], ["/c/a.gz"], ["/t/1/r.ndjson"])
    assert read.renamed == {"/t/0/a": "/l/a.gz", "/t/1/r.ndjson": "/e/r.ndjson.gz"}
    assert inputs.renamed == {}


class _Java:
    """A py4j JavaObject's face: toString() and getCause()."""

    def __init__(self, text: str, cause: _Java | None = None):
        self.text, self.cause = text, cause

    def toString(self) -> str:   # noqa: N802 (Java's name)
        return self.text

    def getCause(self) -> _Java | None:   # noqa: N802
        return self.cause


def _spark_error(module: str, java: _Java | None, text: str = "") -> Exception:
    cls = types.new_class("Py4JJavaError", (Exception,))
    cls.__module__ = module
    exc = cls(text)
    exc.java_exception = java
    return exc


def test_a_spark_failure_is_one_line_naming_the_cause_and_the_file():
    java = _Java("org.apache.spark.SparkException: Job aborted due to stage failure:\n\tat x",
                 _Java("org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] "
                       "Encountered error while reading file file:///l/a.gz.  SQLSTATE: KD001",
                       _Java("java.io.IOException: not a gzip file")))
    assert spark_failure(_spark_error("py4j.protocol", java)) == \
        "java.io.IOException: not a gzip file (reading file:///l/a.gz)"
    # no Java side (or the JVM gone): the error's first line
    assert spark_failure(_spark_error("pyspark.errors.exceptions.captured", None,
                                      "\n[SOMETHING] went wrong\n\tat y")) == \
        "[SOMETHING] went wrong"
    # a cycle of causes ends
    loop = _Java("java.lang.RuntimeException: a")
    loop.cause = loop
    assert spark_failure(_spark_error("py4j.protocol", loop)) == "java.lang.RuntimeException: a"
    assert spark_failure(ValueError("not Spark's")) is None


def test_no_room_for_the_copies_is_a_usage_error(monkeypatch, tmp_path):
    import errno

    from groupctl.cli.analyze import _salvaged
    from groupctl.cli.env import Env
    from groupctl.errors import UsageError

    def full(damaged, into):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(damage, "salvage", full)
    err = io.StringIO()
    with pytest.raises(UsageError) as caught:
        _salvaged(Env(stdout=io.StringIO(), stderr=err), [("/l/a.gz", "cut short")], tmp_path)
    assert str(caught.value) == (f"cannot copy the text of the damaged .gz input(s) into "
                                 f"{tmp_path} (TMPDIR): No space left on device")
    assert err.getvalue() == "groupctl: warning: /l/a.gz: cut short\n"
