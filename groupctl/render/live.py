"""Where the events of a live command (`watch`, `join --watch`) go:

    with open_sinks(env, record_file) as sinks:   # record_file: open, or None
        sinks(event)          # every event: the --record file, then the chosen view
        sinks.tick()          # a few times a second (cli.live.follow): draw the live view,
                              # and notice a reader that has gone
        sinks.reader_gone     # stdout's reader went away (`| head -1` done)

- `-o ndjson`: each event as one JSON line on stdout, flushed per line.
- table/wide on a terminal: the live view (render.watch), drawn on each tick: each group
  in full, or one row per group (render.top) as `view` says (watch --view).
- table/wide into a pipe or file (and json/yaml): one plain line per event.
- `--record FILE`: the same ndjson lines into FILE, beside whichever view runs; it keeps
  them coming after stdout's reader has gone (the probe's `left` too).

A reader that goes (a closed pipe) is noticed on the next write (EPIPE) or, in a calm
group, on the next tick (stdout polled for POLLERR / POLLHUP): stdout is then pointed at
/dev/null and `on_gone` is called, once (cli.live.follow stops the work: the probe
leaves, the command exits 0).
"""
from __future__ import annotations

import contextlib
from typing import Callable

from .output import NdjsonWriter
from .visible import visible
from .watch import _LiveSink
from .watch_lines import plain_line


def stdout_closed(stream) -> bool:
    """True when nobody reads `stream` any more: a pipe whose reading end is closed
    (POLLERR), a socket or terminal hung up (POLLHUP). A file or /dev/null never is."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):   # a StringIO in tests
        return False
    import select

    if not hasattr(select, "poll"):   # Windows: noticed on the next write instead
        return False
    poller = select.poll()
    poller.register(fd, 0)            # no events asked: errors and hang-ups are always told
    return any(revents & (select.POLLERR | select.POLLHUP) for _, revents in poller.poll(0))


class Sinks:
    """Called with each event; see the module doc."""

    def __init__(self, env, record, view: Callable[[dict], None], live: _LiveSink | None):
        self.env = env
        self.record = record
        self.view = view
        self.live = live
        self.reader_gone = False
        self.on_gone: Callable[[], None] | None = None

    def __call__(self, event: dict) -> None:
        if self.record is not None:
            self.record.write(event)
        if self.reader_gone:
            return
        try:
            self.view(event)
        except BrokenPipeError:
            self._gone()

    def tick(self) -> None:
        if self.reader_gone:
            return
        if stdout_closed(self.env.stdout):
            self._gone()
        elif self.live is not None:
            try:
                self.live.draw()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        if self.reader_gone:
            return
        self.reader_gone = True
        self.env.silence_broken_pipe()   # later writes (rich's last frame, a flush) go nowhere
        if self.on_gone is not None:
            self.on_gone()


@contextlib.contextmanager
def open_sinks(env, record=None, live_view: str = "full", fleet: bool = False):
    """Sinks for this command's -o and terminal; `record`: the open --record file (closed
    here at the end), or None; `live_view` and `fleet` (watch --all): the live view's choice
    (render.watch._LiveSink)."""
    with contextlib.ExitStack() as stack:
        if record is not None:
            stack.enter_context(record)
        # a RecordFile writes events itself (whole lines; a full disk: one UsageError)
        writer = None if record is None else \
            record if hasattr(record, "failed") else NdjsonWriter(record)
        live = None
        fmt = env.settings.output
        if fmt == "ndjson":
            view = NdjsonWriter(env.stdout).write
        elif fmt in ("table", "wide") and env.stdout_is_terminal:
            view = live = stack.enter_context(_LiveSink(env, live_view, fleet))
        else:
            said: set = set()   # notes given once per stream

            def view(event: dict) -> None:
                env.stdout.write(visible(plain_line(event, said)) + "\n")
                env.stdout.flush()
        yield Sinks(env, writer, view, live)
