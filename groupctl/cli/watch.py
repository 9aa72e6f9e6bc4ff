"""`groupctl watch GROUP... | --all`: follow groups passively (observe.watch), without
joining them: the rebalance story of DESIGN §4 as events, a live view on a terminal."""
from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import UsageError
from .app import app
from .complete import complete_groups
from .env import env_of


@app.command("watch")
def watch_cmd(
    ctx: typer.Context,
    groups: Optional[List[str]] = typer.Argument(None, metavar="GROUP...",
                                                 help="The groups to watch.",
                                                 autocompletion=complete_groups),
    all_groups: bool = typer.Option(False, "--all", help="Watch every group of the cluster, "
                                    "following groups that appear and disappear."),
    regex: Optional[str] = typer.Option(None, "--regex", metavar="RE",
                                        help="With --all: only groups whose name matches RE."),
    interval: float = typer.Option(1.0, "--interval", metavar="S",
                                   help="Seconds between describe rounds (default 1)."),
    duration: Optional[float] = typer.Option(None, "--duration", metavar="S",
                                             help="Stop after S seconds (exit 0)."),
    record: Optional[str] = typer.Option(None, "--record", metavar="FILE",
                                         help="Also write the events (ndjson) to FILE."),
    max_rebalances: Optional[int] = typer.Option(
        None, "--max-rebalances", metavar="N", help="With --duration: exit 8 as soon as a "
        "group rebalances more than N times."),
):
    """Watch groups without joining them: state changes, generations (classic) or epochs
    (consumer, share and streams groups), members joining and leaving, each member's
    assignment with what it gained and lost (streams: its active, standby and warm-up
    tasks too), a classic group converting to a consumer group and back (`type_changed`),
    and one `rebalance` line per rebalance with its duration and its reason (who joined
    or left, a changed subscription, new partitions, a static member restarted, or no
    membership change).

    Observation only: it polls each group type's describe API (batched per coordinator,
    every --interval) and never joins, heartbeats, leaves or commits. A live view on a
    terminal; one line per event otherwise; -o ndjson streams the events (DESIGN §4).
    A broker restart or coordinator move is said once on stderr; the watch reconnects
    with back-off and carries on without repeating events. A deleted group is a `state`
    Dead event. Ctrl-C / SIGTERM or the end of --duration: exit 0, with a summary per
    group (rebalances, time spent rebalancing, members that flapped; -o yaml: YAML, -o
    json/ndjson: JSON lines). A closed pipe (`| head -1`): exit 0 at once, no summary.
    --record FILE must be writable (exit 2 otherwise, before anything is sent).
    --max-rebalances N (with --duration): exit 8 as soon as a group rebalances more than
    N times, e.g. `groupctl watch orders --duration 600 --max-rebalances 2 || rollback`."""
    from ..observe.watch import WatchSettings

    env = env_of(ctx)
    settings = WatchSettings(groups=list(dict.fromkeys(groups or [])), all_groups=all_groups,
                             regex=_regex(regex, all_groups), interval=interval,
                             duration=duration, max_rebalances=max_rebalances)
    _check(settings)
    return _run(env, settings, record)


def _regex(text: str | None, all_groups: bool):
    if text is None:
        return None
    if not all_groups:
        raise UsageError("--regex needs --all")
    import re

    try:
        return re.compile(text)
    except re.error as exc:
        raise UsageError(f"--regex {text!r}: {exc}") from None


def _check(s) -> None:
    if s.all_groups and s.groups:
        raise UsageError("give GROUP names or --all, not both")
    if not s.all_groups and not s.groups:
        raise UsageError("name the groups to watch, or --all")
    if s.interval <= 0:
        raise UsageError("--interval must be positive")
    if s.duration is not None and s.duration <= 0:
        raise UsageError("--duration must be positive")
    if s.max_rebalances is not None and (s.duration is None or s.max_rebalances < 0):
        raise UsageError("--max-rebalances needs --duration and a number >= 0")


def _run(env, settings, record: str | None) -> int:
    from ..observe.watch import ConditionViolated, Watcher
    from ..render.live import open_sinks
    from ..render.watch_lines import summary_text
    from .common import make_cluster, run_async
    from .live import follow, open_record

    record_file = open_record(record)   # a bad path: exit 2 before any work
    box: dict = {}

    def notice(text: str) -> None:
        env.stderr.write(f"groupctl: watch: {text}\n")
        env.stderr.flush()

    async def main():
        async with make_cluster(env) as cluster:
            with open_sinks(env, record_file) as sinks:
                box["sinks"] = sinks
                watcher = box["watcher"] = Watcher(cluster, settings, emit=sinks, clock=env.clock.wall,
                                                   notice=notice,
                                                   poll_deadline=env.settings.timeout)
                await follow(sinks, watcher.run())

    violated = None
    try:
        run_async(env, main(), timeout=None, signal_stops_cleanly=True)
    except ConditionViolated as exc:
        violated = exc
    finally:
        if record_file is not None:
            record_file.close()   # never opened by the sinks (no broker reachable, ...)
    watcher, sinks = box.get("watcher"), box.get("sinks")
    if watcher is not None and not (sinks is not None and sinks.reader_gone):
        # the end of --duration, exit 8, Ctrl-C or SIGTERM: what the watch saw
        env.stdout.write(summary_text(watcher.summaries(), env.settings.output))
        env.stdout.flush()
    if violated is not None:
        raise violated
    return 0
