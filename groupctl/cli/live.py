"""What the live commands (`watch`, `join --watch`) share in the CLI: the --record file,
checked before any work starts, and the run of the work beside the view's clock.

    record = open_record(path)                      # UsageError (exit 2) naming the path
    with open_sinks(env, record) as sinks:
        await follow(sinks, work(emit=sinks))       # None when stdout's reader went away

follow() ticks the sinks every TICK_S while the work runs (the live view redraws, a closed
pipe is noticed in a calm group too). When stdout's reader goes, the work is cancelled
once, with the reason READER_GONE (the probe leaves with it as its reason), and follow()
returns None: the command exits 0 without a summary, as `describe | head` does. A signal
that cancels the command cancels the work too and waits for its cleanup (the probe's
leave) before the cancellation goes on.
"""
from __future__ import annotations

import asyncio
import os
from typing import Any, Awaitable

from ..errors import UsageError

TICK_S = 0.25                          # how often the view is looked after
READER_GONE = "output closed (its reader went away)"


def open_record(path: str | None):
    """The --record FILE opened for appending, or None; a path that cannot be written (a
    missing directory, a directory, /proc/version) is a usage error found before any work
    starts, in one line naming the path."""
    if path is None:
        return None
    if path == "":
        raise UsageError("--record needs a file name")
    if os.path.isdir(path):
        raise UsageError(f"--record {path}: is a directory")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"--record {path}: no such directory {folder}")
    from ..render.output import RecordFile

    return RecordFile(path)  # whole lines; a full disk later: one error line, file intact


async def follow(sinks, work: Awaitable, tick_s: float = TICK_S) -> Any:
    """Run `work`, ticking `sinks` meanwhile; its result, or None when the reader went."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    stopping: list[str] = []   # cancelled once only: a second cancel would cut the leave short

    def stop(reason: str | None = None) -> None:
        if not task.done() and not stopping:
            stopping.append(reason or "")
            task.cancel(reason)

    sinks.on_gone = lambda: loop.call_soon(stop, READER_GONE)
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=tick_s)
            sinks.tick()
    finally:
        if not task.done():   # we were cancelled (Ctrl-C, SIGTERM): the work cleans up first
            stop()
            await asyncio.wait({task})
            failure = None if task.cancelled() else task.exception()
            if failure is not None:
                raise failure
    if task.cancelled() and sinks.reader_gone:
        return None
    return task.result()
