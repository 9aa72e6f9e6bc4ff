"""The class-data archive (groupctl/jvm_cds.py) of a short `analyze` run's driver JVM.

Most of a short run's time is the JVM loading and verifying Spark's classes. Measured on
the bench machine, quiet: a bare local[2] session plus one count took 11.1 s, and 4.6-5.5 s
mapping an archive of the classes an earlier run loaded; a 5,000-line `analyze` about 23 s
and 16-17 s. The first short run on a machine (per Java and Spark install) writes the
archive when its JVM exits, after its results are written: that run's "stop Spark" phase
takes 10-16 s longer, once. The archive is about 185 MB. GROUPCTL_SPARK_NO_CDS turns it off.

Only the driver takes it (in local mode the executors are the driver): a worker of a
standalone cluster has another JVM and classpath.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import jvm_cds

# The JVM's notes on classes it cannot archive go to stdout by default: off, so that
# `-o json` stays JSON.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
DUMP_TIMEOUT_S = 180


@dataclass(frozen=True)
class Archive:
    java_options: str
    dump: Path | None   # the temp file this run's JVM writes at exit (the first run)


def plan() -> Archive | None:
    """JVM options for a new short-run driver: map the archive, or write it at exit.
    None when it is off, or Java or Spark's jars cannot be found."""
    if os.environ.get("GROUPCTL_SPARK_NO_CDS"):
        return None
    import pyspark

    java = jvm_cds.java_path()
    jars = Path(pyspark.__file__).parent / "jars"
    if not java or not jars.is_dir():
        return None
    real = os.path.realpath(java)
    try:
        flags, dump = jvm_cds.options("spark-driver", [
            real, jvm_cds.stamp(real), pyspark.__version__, str(jars.resolve()),
            *jvm_cds.jar_stamps(jars)])
    except OSError:
        return None
    return Archive(" ".join([*flags, QUIET]), dump) if flags else None


def end(jvm: subprocess.Popen) -> bool:
    """Let a JVM cut loose from its gateway exit (EOF on its stdin ends Spark's Python
    gateway) and wait for it; killed if it takes longer than DUMP_TIMEOUT_S. True when it
    exited by itself, cleanly."""
    try:
        if jvm.stdin:
            jvm.stdin.close()
        jvm.wait(timeout=DUMP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        jvm.kill()
        jvm.wait()
        return False
    return jvm.returncode == 0


def finish(archive: Archive | None, jvm: subprocess.Popen | None) -> None:
    """After Spark is stopped, when this run's JVM writes the archive: end the JVM and keep
    the archive if it exited cleanly."""
    if archive is None or archive.dump is None:
        return
    jvm_cds.commit(archive.dump, jvm is not None and end(jvm))
