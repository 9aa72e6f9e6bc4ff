"""Class-data sharing (CDS) archives for the JVMs groupctl starts: the lab's brokers and
Kafka's tools (lab/dist.py), and `analyze`'s short-run Spark driver
(analytics/jvm_archive.py).

A JVM loading a big classpath spends most of its start-up parsing and verifying classes.
The first run of each kind dumps a dynamic archive of the classes it loaded
(-XX:ArchiveClassesAtExit) to a temp name; when it exits cleanly the archive is renamed
into place and later runs map it (-XX:SharedArchiveFile). The name hashes what the
archive is valid for (the JVM, the jars), so another Java or Kafka or Spark never picks
up a stale one, and a JVM that can't use an archive just ignores it (-Xshare:auto).
Archives live in $GROUPCTL_CACHE/cds (default ~/.cache/groupctl/cds).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Iterable

from . import safe_files


def java_path() -> str | None:
    """The java executable groupctl starts: $JAVA_HOME/bin/java, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def cache_root() -> Path:
    """``$GROUPCTL_CACHE`` or ``~/.cache/groupctl``, refused (safe_files.UnsafePath, an
    OSError) when another local user could write to it."""
    return safe_files.cache_root()


def options(kind: str, valid_for: Iterable[str]) -> tuple[list[str], Path | None]:
    """JVM flags to map the `kind` archive made for `valid_for` (strings naming the JVM and
    its jars), or to create it; and the temp file a creating JVM dumps to (hand it to
    commit() after that JVM exits). ([], None) when the cache can't be written."""
    digest = hashlib.sha256("\n".join(valid_for).encode()).hexdigest()[:16]
    try:
        directory = safe_files.private_dir(cache_root() / "cds")
        archive = directory / f"{kind}-{digest}.jsa"
        if archive.is_file() and archive.stat().st_size > 0:
            return [f"-XX:SharedArchiveFile={archive}"], None
        _drop_orphans(directory)
    except OSError:
        return [], None
    tmp = archive.with_name(f"{archive.stem}.{os.getpid()}-{time.monotonic_ns()}.tmp")
    return [f"-XX:ArchiveClassesAtExit={tmp}"], tmp


def commit(dump: Path | str | None, ok: bool) -> None:
    """After the dumping JVM exited: keep its archive if it exited cleanly."""
    if not dump:
        return
    dump = Path(dump)
    final = dump.with_name(dump.name.split(".", 1)[0] + ".jsa")
    try:
        if ok and dump.is_file() and dump.stat().st_size > 0:
            os.replace(dump, final)
        else:
            dump.unlink(missing_ok=True)
    except OSError:
        pass


def jar_stamps(folder: Path) -> list[str]:
    """Each jar's stamp(): a new or replaced jar makes another archive."""
    return [stamp(jar) for jar in sorted(Path(folder).iterdir())]


def stamp(path: Path | str) -> str:
    """A file's name, size and mtime."""
    st = os.stat(path)
    return f"{Path(path).name}:{st.st_size}:{int(st.st_mtime)}"


def _drop_orphans(directory: Path) -> None:
    """Temp dumps of JVMs whose Python parent is gone (killed mid-dump: ~100 MB each)."""
    for tmp in directory.glob("*.tmp"):
        try:
            pid = int(tmp.name.split(".")[1].split("-")[0])
            os.kill(pid, 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
        except (ValueError, IndexError, OSError):
            continue
