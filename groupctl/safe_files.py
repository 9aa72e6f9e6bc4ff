"""Every file groupctl writes, and the cache it runs code from, through one set of checks.

- `cache_root()` / `private_dir(path)`: the cache ($GROUPCTL_CACHE, ~/.cache/groupctl)
  holds what groupctl executes (Kafka's jars, JVM class-data archives), so a directory of it that another user could write is refused
  (`unsafe_reason`): it must be a real directory (no symlink), owned by this user, not
  writable by group or others. A directory groupctl creates there is 0700.
- `open_regular(path, flags)`: a file opened without following a symlink (O_NOFOLLOW) and
  without blocking on a FIFO (O_NONBLOCK, then fstat: a regular file, or where asked a
  character device such as /dev/null).
- `write_atomic(path, data)`: a file written whole into a temp file beside it, then
  renamed over it: a reader (or a full disk) never sees half a file.

These raise OSError (an UnsafePath for a refused path): each command says which option
or file it was in its own words (exit 2).
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class UnsafePath(OSError):
    """A path groupctl refuses to use: the message names it and says why."""

    def __init__(self, path: str | os.PathLike, why: str):
        super().__init__(errno.EPERM, why, str(path))
        self.why = why

    def __str__(self) -> str:
        return f"{self.filename}: {self.why}"


def default_cache_root() -> Path:
    """``$GROUPCTL_CACHE`` or ``~/.cache/groupctl`` (not checked)."""
    env = os.environ.get("GROUPCTL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "groupctl"


def unsafe_reason(path: str | os.PathLike) -> str | None:
    """Why another local user could change what is in the directory `path` (None: they
    cannot, or it does not exist yet)."""
    try:
        st = os.lstat(path)
    except OSError:   # missing, or cannot be (a file on its path): nothing planted there;
        return None   # making it fails later with its own message
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link (the cache must be a directory of its own)"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    writers = [who for bit, who in ((stat.S_IWGRP, "its group"), (stat.S_IWOTH, "others"))
               if st.st_mode & bit]
    if writers:
        return (f"is writable by {' and '.join(writers)} (mode "
                f"{stat.S_IMODE(st.st_mode):04o}; chmod go-w it, or remove it)")
    return None


def check_cache(root: Path | None = None) -> Path:
    """The cache root, refused (UnsafePath) when another user could plant code in it."""
    root = default_cache_root() if root is None else root
    why = unsafe_reason(root)
    if why is not None:
        raise UnsafePath(root, f"groupctl runs code from its cache and {why}")
    return root


def cache_root() -> Path:
    """The checked cache root (see check_cache)."""
    return check_cache()


def private_dir(path: str | os.PathLike, below: Path | None = None) -> Path:
    """`path` made (0700 for what is made) and checked: each directory from `below`
    (default: the cache root) down to `path` must be safe (unsafe_reason)."""
    path = Path(path)
    below = default_cache_root() if below is None else below
    missing = []
    for parent in (path, *path.parents):
        if os.path.lexists(parent):
            break
        missing.append(parent)
    for directory in reversed(missing):   # os.makedirs gives 0700 to the last one only
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
    try:
        parts = path.relative_to(below).parts
    except ValueError:
        parts = ()
        below = path
    current = below
    for part in ("",) + parts:
        current = current / part if part else current
        why = unsafe_reason(current)
        if why is not None:
            raise UnsafePath(current, f"groupctl runs code from its cache and {why}")
    return path


def open_regular(path: str | os.PathLike, flags: int, mode: int = 0o600,
                 char_device: bool = False) -> int:
    """os.open of a regular file (or with `char_device` a character device such as
    /dev/null), never through a symlink and never blocking on a FIFO (UnsafePath
    otherwise). The descriptor is blocking again when returned."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) or char_device and stat.S_ISCHR(st.st_mode)):
            raise UnsafePath(path, "not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _nofollow_error(path: str | os.PathLike, exc: OSError) -> OSError:
    if exc.errno == errno.ELOOP:   # O_NOFOLLOW met a symlink
        return UnsafePath(path, "is a symbolic link (not followed)")
    if exc.errno == errno.ENXIO:   # O_NONBLOCK | O_WRONLY on a FIFO with no reader
        return UnsafePath(path, "not a regular file")
    return exc


def open_append(path: str | os.PathLike, mode: int = 0o600):
    """A regular file (or a character device: /dev/null) opened to append (binary,
    unbuffered), made with `mode` if missing."""
    try:
        fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode, char_device=True)
    except OSError as exc:
        raise _nofollow_error(path, exc) from None
    return os.fdopen(fd, "ab", buffering=0)


def open_read(path: str | os.PathLike):
    """A regular file opened to read (binary), never through a symlink."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError as exc:
        raise _nofollow_error(path, exc) from None
    return os.fdopen(fd, "rb")


def check_writable_target(path: str | os.PathLike) -> None:
    """A path write_atomic would replace: missing, or a regular file (no symlink)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(path, "is a symbolic link (not followed)")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePath(path, "not a regular file")


def write_atomic(path: str | os.PathLike, data: bytes | str, mode: int = 0o600) -> None:
    """`data` written whole to `path` (a temp file beside it, renamed over it; a symlink
    at `path` is refused, not followed). On any error the old file stays as it was."""
    path = Path(path)
    check_writable_target(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    import tempfile   # here: ~1.3 ms (random, bisect...) that most commands never need

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
