"""An output directory's files replaced whole or not at all (`analyze --out`): everything
is written into a fresh directory next to it first; only once all of it is written does
each file (and each directory below `merge_depth`, e.g. a Parquet table) take the place of
its old self by rename. A full disk (or any error) while writing leaves the old files as
they were and no temp behind. Files of the user's in the directory that groupctl does not
write stay (--out may well be an existing directory with other things in it). Nothing is
written through a symbolic link: --out itself may not be one, and a link inside it where
groupctl writes an entry is replaced by the entry, not followed.

    with replaced_atomically(Path("out")) as staging:
        write_everything(staging)
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from ..safe_files import UnsafePath

NO_SPACE = os.strerror(28)  # "No space left on device", also inside Spark's Java errors


@contextmanager
def replaced_atomically(out: Path, option: str = "--out") -> Iterator[Path]:
    check_not_symlink(out, option)
    parent = out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.new-"))
    except OSError as exc:
        raise _cannot_write(out, option, exc) from None
    try:
        yield staging
        _swap(staging, out)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError) or NO_SPACE in str(exc):
            raise _cannot_write(out, option, exc) from None
        raise


def check_not_symlink(out: Path, option: str = "--out") -> None:
    if out.is_symlink():
        raise UsageError(f"{option} {out}: is a symbolic link (not followed: give the "
                         f"directory it points to)")


def _swap(staging: Path, out: Path, merge_depth: int = 1) -> None:
    """Move staging's entries into out: files by os.replace; directories whole (the old one
    renamed aside, then removed), except the first `merge_depth` levels, merged."""
    if out.is_symlink():   # planted after the check: never merge into where it points
        raise UnsafePath(out, "is a symbolic link (not followed)")
    if not out.exists():
        os.rename(staging, out)
        return
    _move_into(staging, out, merge_depth)
    shutil.rmtree(staging, ignore_errors=True)


def _move_into(src: Path, dst: Path, merge_depth: int) -> None:
    for entry in sorted(src.iterdir()):
        target = dst / entry.name
        if target.is_symlink():   # replaced by the entry, never followed
            target.unlink()
        if entry.is_dir() and target.is_dir() and merge_depth > 0:
            _move_into(entry, target, merge_depth - 1)
        elif entry.is_dir() and target.exists():
            aside = Path(tempfile.mkdtemp(dir=dst, prefix=f".{entry.name}.old-"))
            os.rename(target, aside / entry.name)
            os.rename(entry, target)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.replace(entry, target)


def _cannot_write(out: Path, option: str, exc: BaseException) -> UsageError:
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
        NO_SPACE if NO_SPACE in str(exc) else (str(exc).splitlines() or [type(exc).__name__])[0]
    return UsageError(f"{option} {out}: cannot write: {why}; {out} is unchanged")
