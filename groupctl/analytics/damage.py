"""Damaged compressed inputs: a `.gz` cut short (a rotated log copied while it was being
written), bytes that are not gzip at all, a stream damaged in the middle, bytes after its
end. Spark's gzip codec fails the whole job on one (a Java stack trace, no tables); so each
local `.gz` input is read once with zlib first, on a thread of its own while Spark's JVM
starts (zlib lets go of the GIL), and a damaged one is read from a plain copy of its text
up to the damage, with a warning that says what was lost.

    damaged = in_background(paths)                 # a Future
    for path, what in damaged.result(): warn(f"{path}: {what}")
    copies = salvage(damaged.result(), tmp_dir)    # {copy: original}: read the copies
"""
from __future__ import annotations

import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO, Iterable

READ_BYTES = 1 << 20
# text produced per zlib call: a log compresses 10-20x, a run of zeros 1000x; bounded so
# a small damaged file never costs a big buffer
TEXT_BYTES_PER_CALL = 8 << 20
GZIP = 16 + zlib.MAX_WBITS   # zlib's wbits for a gzip header and trailer
MAGIC = b"\x1f\x8b"
# zlib's words for a member's trailer that does not match its text
CHECKSUMS = {"incorrect data check": "CRC-32", "incorrect length check": "length"}


def gzip_damage(f: BinaryIO, text_to: BinaryIO | None = None) -> str | None:
    """None when `f` is whole gzip (one member or several, as `cat a.gz b.gz` makes), else
    what is wrong with it and how much text comes before the damage. `text_to` gets the
    text zlib gives, up to the damage."""
    sink = text_to.write if text_to is not None else len
    if f.read(2) != MAGIC:
        return "not gzip (nothing read from it)"
    f.seek(0)
    text = 0                        # bytes of text decompressed so far
    member = zlib.decompressobj(GZIP)
    begun = False                   # bytes of the current member seen
    pending = b""
    while True:
        if not pending:
            pending = f.read(READ_BYTES)
            if not pending:
                break
        before = member.copy()
        try:
            out = member.decompress(pending, TEXT_BYTES_PER_CALL)
        except zlib.error as exc:
            if not begun and not pending.startswith(MAGIC):
                # bytes after a member's end that start no member (zeros, text): the
                # first member's start is known to be gzip (MAGIC above)
                rest = len(pending) + _left(f)
                return f"{rest:,} byte(s) after the end of its gzip data (ignored)"
            text += _text_before_error(before, pending, sink)
            if _reason(exc) in CHECKSUMS:   # the text is all there, but not as written
                return (f"its {CHECKSUMS[_reason(exc)]} does not match its {text:,} bytes "
                        f"of text (bytes changed somewhere): read whole, a line may be wrong")
            return (f"damaged after {text:,} bytes of text ({_reason(exc)}): "
                    f"the lines before the damage are read, the rest skipped")
        sink(out)
        text += len(out)
        begun = True
        if member.eof:
            pending, member, begun = member.unused_data, zlib.decompressobj(GZIP), False
        else:
            pending = member.unconsumed_tail
    if begun:
        return (f"cut short after {text:,} bytes of text (its gzip data ends early): "
                f"the lines up to there are read")
    return None


def _text_before_error(member, data: bytes, sink, step: int = 256) -> int:
    """The text `member` gives from `data` before zlib's error (zlib gives none of a call
    that fails): the same bytes again, `step` at a time, then the failing step's a byte
    at a time."""
    text = 0
    for at in range(0, len(data), step):
        before = member.copy()
        try:
            out = member.decompress(member.unconsumed_tail + data[at:at + step])
        except zlib.error:
            return text + (_text_before_error(before, data[at:at + step], sink, 1)
                           if step > 1 else 0)
        sink(out)
        text += len(out)
    return text


def _left(f: BinaryIO) -> int:
    """Bytes of `f` not read yet (without reading them)."""
    here = f.tell()
    end = f.seek(0, 2)
    f.seek(here)
    return end - here


def _reason(exc: zlib.error) -> str:
    # zlib's "Error -3 while decompressing data: invalid distance too far back"
    return str(exc).rsplit(": ", 1)[-1]


def check(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(path, what is wrong) for each damaged local `.gz` among `paths`, in their order;
    URLs and files that cannot be opened are left to Spark."""
    found = []
    for path in dict.fromkeys(paths):
        if "://" in path or not path.endswith(".gz"):
            continue
        try:
            with open(path, "rb") as f:
                what = gzip_damage(f)
        except OSError:
            continue
        if what is not None:
            found.append((path, what))
    return found


def in_background(paths: Iterable[str]) -> Future[list[tuple[str, str]]]:
    """check(paths) on a thread of its own (the CLI takes its result once Spark started)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gzip-check")
    try:
        return pool.submit(check, list(paths))
    finally:
        pool.shutdown(wait=False)


def salvage(damaged: Iterable[tuple[str, str]], into: Path) -> dict[str, str]:
    """A plain copy of each damaged file's text up to its damage, under `into` (the name
    without `.gz`, so Spark reads it as text): {copy: original}. Spark then reads all of
    that text; reading the damaged file itself, its codec drops the buffer it held when
    the damage came (hundreds of lines)."""
    copies = {}
    for n, (path, _what) in enumerate(damaged):
        copy = into / str(n) / Path(path).name.removesuffix(".gz")
        copy.parent.mkdir(parents=True)
        with open(path, "rb") as f, open(copy, "wb") as out:
            gzip_damage(f, out)
        copies[str(copy)] = path
    return copies
