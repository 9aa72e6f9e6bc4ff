"""Where a local Spark run keeps its files: a directory of groupctl's own, given to the
driver JVM as `spark.local.dir` (block manager, shuffle files, pyspark's temp files) and
as its `java.io.tmpdir`, removed once that JVM has exited.

Spark deletes its `/tmp/spark-*` and `/tmp/blockmgr-*` directories from a JVM shutdown
hook, which does not run when the JVM is killed or ends while its hooks race the exit;
those directories then stay in /tmp for good (a run from cron leaves one set a run).
Removed here by the process that made them: after the JVM's exit (session.publish_archive),
after a Ctrl-C's kill, and at this process's exit whatever happened.
"""
from __future__ import annotations

import atexit
import shutil
import tempfile

_made: list[str] = []


def make() -> str:
    """A new scratch directory (0700, mkdtemp), removed at the latest when this process ends."""
    path = tempfile.mkdtemp(prefix="groupctl-spark-")
    _made.append(path)
    return path


def remove(path: str | None) -> None:
    if path is None:
        return
    shutil.rmtree(path, ignore_errors=True)
    if path in _made:
        _made.remove(path)


@atexit.register
def _remove_all() -> None:
    for path in list(_made):
        remove(path)
