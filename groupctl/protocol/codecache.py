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
faster, never fail it.
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

_dir: str | None = None


def _cache_dir() -> str:
    global _dir
    if _dir is None:
        root = os.environ.get("GROUPCTL_CACHE") or os.path.join("~", ".cache", "groupctl")
        tag = f"{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}"
        _dir = os.path.join(os.path.expanduser(root), "codecs", tag)
    return _dir


def compile_cached(source: str, filename: str):
    """compile(source, filename, "exec"), from the cache when it holds exactly this."""
    key = f"{zlib.crc32(filename.encode() + source.encode()):08x}-{len(source)}.bin"
    path = os.path.join(_cache_dir(), key)
    try:
        with open(path, "rb") as f:
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
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
