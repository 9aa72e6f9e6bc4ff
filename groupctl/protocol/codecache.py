"""An on-disk cache of the compiled decoders' code objects (see codegen.py).

Compiling the generated decoder source is most of the cost of decoding a response the
first time in a process (about 8 ms of a `describe` on a 2-core machine). compile() is a
pure function of (source, filename, flags), so its result is kept as a marshal file under
$GROUPCTL_CACHE/codecs (default ~/.cache/groupctl/codecs), in a directory per bytecode
format (the interpreter's .pyc magic number), named by a checksum of filename and source.

The file holds the filename, the source and a checksum next to the code object, and a
hit must match all three exactly: a stale, colliding, damaged or foreign file is never
used, only recompiled and overwritten. Any problem with the cache (unwritable, corrupt,
a race with another process) falls back to compiling: the cache can only make a run
faster, never fail it. A cache another local user could write to (safe_files.unsafe_reason)
is never read: a code object found there is never run (the CLI refuses such a cache with
exit 2 before a command starts; a program importing groupctl just compiles).
"""
from __future__ import annotations

import marshal
import os
import sys
import zlib
from _thread import get_ident

# The bytecode format of this interpreter: a code object marshalled by another one must
# never be loaded (importlib keys .pyc files the same way).
from _frozen_importlib_external import MAGIC_NUMBER

from ..safe_files import default_cache_root, open_read, private_dir

_dir: str | None = None
_checked: str | None = None   # the directory private_dir made and checked in this process


def _cache_dir() -> str:
    global _dir
    if _dir is None:
        tag = f"{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}"
        _dir = os.path.join(default_cache_root(), "codecs", tag)
    return _dir


def _checked_dir() -> str | None:
    """The cache directory, made 0700 if missing, or None when another user could write
    into it (or it cannot be made): then nothing is read from it or written to it."""
    global _checked
    directory = _cache_dir()
    if _checked != directory:
        try:
            private_dir(directory)
        except OSError:
            return None
        _checked = directory
    return directory


def compile_cached(source: str, filename: str):
    """compile(source, filename, "exec"), from the cache when it holds exactly this."""
    directory = _checked_dir()
    if directory is None:
        return compile(source, filename, "exec")
    key = f"{zlib.crc32(filename.encode() + source.encode()):08x}-{len(source)}.bin"
    path = os.path.join(directory, key)
    try:
        with open_read(path) as f:
            cached_filename, cached_source, checksum, data = marshal.loads(f.read())
        # the checksum keeps a damaged code object (which could crash the interpreter)
        # from ever being loaded
        if (cached_filename == filename and cached_source == source
                and zlib.crc32(data) == checksum):
            return marshal.loads(data)
    except Exception:  # noqa: BLE001, S110 - missing, corrupt, foreign: compile instead
        pass
    code = compile(source, filename, "exec")
    data = marshal.dumps(code)
    _store(path, marshal.dumps((filename, source, zlib.crc32(data), data)))
    return code


def _store(path: str, data: bytes) -> None:
    # Write a temporary file and rename it, so a reader never sees half a file.
    tmp = f"{path}.{os.getpid()}.{get_ident()}.tmp"
    try:
        with open(tmp, "xb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
