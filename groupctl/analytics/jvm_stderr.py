"""The Spark driver JVM's stderr, filtered: Spark's launch notices and "shell" banner
dropped, everything else (errors, the progress bar) passed on."""
from __future__ import annotations

import contextlib
import os
import threading

# The JVM's notice about Spark's launch options, and Spark's "shell" banner (pyspark counts
# as a shell), which it prints whatever the log4j configuration says.
JVM_NOISE = (b"WARNING: Using incubator modules", b"Setting default log level to",
             b"To adjust logging level use sc.setLogLevel")


@contextlib.contextmanager
def jvm_stderr_filtered():
    """Start the JVM with its stderr on a pipe that drops JVM_NOISE and passes everything
    else (errors, the progress bar) to our stderr, for the JVM's lifetime."""
    try:
        real = os.dup(2)
    except OSError:  # no stderr at all
        yield
        return
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    threading.Thread(target=_forward, args=(read_end, real), daemon=True,
                     name="spark-stderr").start()
    try:
        yield
    finally:
        os.dup2(real, 2)


def _forward(read_end: int, real: int) -> None:
    pending = b""
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        pending += chunk
        while pending:
            cut = max(pending.rfind(b"\n"), pending.rfind(b"\r"))
            if cut < 0:
                break
            block, pending = pending[:cut + 1], pending[cut + 1:]
            kept = b"".join(line for line in block.splitlines(keepends=True)
                            if not line.startswith(JVM_NOISE))
            if kept:
                os.write(real, kept)
    if pending:
        os.write(real, pending)
