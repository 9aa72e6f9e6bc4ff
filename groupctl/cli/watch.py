"""`groupctl watch GROUP... | --all`: follow groups passively (observe.watch), without
joining them: the rebalance story as events (docs/reference/events.md), a live view on a terminal."""
from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import UsageError
from . import metrics_server_options
from .app import app
from .complete import complete_groups, complete_sources
from .env import env_of
from .group_ids import check as check_group_ids


@app.command("watch")
def watch_cmd(
    ctx: typer.Context,
    groups: Optional[List[str]] = typer.Argument(None, metavar="GROUP...",
                                                 help="The groups to watch.",
                                                 autocompletion=complete_groups,
                                                 callback=check_group_ids),
    all_groups: bool = typer.Option(False, "--all", help="Watch every group of the cluster, "
                                    "following groups that appear and disappear."),
    regex: Optional[str] = typer.Option(None, "--regex", metavar="RE",
                                        help="With --all: only groups whose name matches RE."),
    source: str = typer.Option("auto", "--source", metavar="auto|describe|records",
                               autocompletion=complete_sources,
                               help="Where the observations come from: auto (the default: "
                               "the group coordinator's records in __consumer_offsets and "
                               "describe together where the records may be read, describe "
                               "alone otherwise; said on stderr), describe (poll each "
                               "group's describe API) or records (the records alone)."),
    interval: Optional[float] = typer.Option(
        None, "--interval", metavar="S",
        help="Seconds between describe rounds (default 1; not with --source records)."),
    duration: Optional[float] = typer.Option(None, "--duration", metavar="S",
                                             help="Stop after S seconds (exit 0)."),
    record: Optional[str] = typer.Option(None, "--record", metavar="FILE",
                                         help="Also write the events (ndjson) to FILE."),
    max_rebalances: Optional[int] = typer.Option(
        None, "--max-rebalances", metavar="N", help="With --duration: exit 8 as soon as a "
        "group rebalances more than N times."),
    metrics_port: Optional[int] = typer.Option(
        None, "--metrics-port", metavar="PORT", help="Serve Prometheus /metrics and "
        "/healthz on PORT (0: any free port, said on stderr)."),
    metrics_host: str = metrics_server_options.METRICS_HOST,
    web_config: Optional[str] = metrics_server_options.WEB_CONFIG,
    metrics_groups: Optional[list[str]] = typer.Option(
        None, "--metrics-groups", metavar="GROUP", help="With --metrics-port: per-group "
        "series for this group (repeatable). Default: every named group; with --all or "
        "--regex, the first 1000 groups seen (fleet-level series cover all of them)."),
    metrics_regex: Optional[list[str]] = typer.Option(
        None, "--metrics-regex", metavar="RE", help="With --metrics-port: per-group series "
        "for the groups RE fully matches (repeatable; '.*': every group, no limit)."),
    metrics_ignore: Optional[list[str]] = typer.Option(
        None, "--metrics-ignore-regex", metavar="RE", help="With --metrics-port: no "
        "per-group series for the groups RE fully matches (repeatable; wins over the others)."),
    view: str = typer.Option("auto", "--view", metavar="auto|top|full",
                             help="The live view on a terminal: top (one row per group), "
                             "full (each group in full) or auto (default: top with --all, "
                             "or when the groups no longer fit in full).",
                             autocompletion=lambda incomplete: [
                                 v for v in ("auto", "top", "full") if v.startswith(incomplete)]),
    lag: bool = typer.Option(False, "--lag", help="Also read each group's lag (committed "
                             "offsets and log-end offsets) every --lag-interval: on each "
                             "rebalance event (lag_before, lag_after), in the metrics and "
                             "in the live view."),
    lag_interval: Optional[float] = typer.Option(
        None, "--lag-interval", metavar="S", help="With --lag: seconds between lag rounds "
        "(default 10)."),
    must_exist: bool = typer.Option(False, "--must-exist", help="Exit 5 when a named group "
                                    "does not exist at the first look (without it: said on "
                                    "stderr, and watched for until it appears)."),
):
    """Watch groups without joining them: state changes, generations (classic) or epochs
    (consumer, share and streams groups), members joining and leaving, each member's
    assignment with what it gained and lost (streams: its active, standby and warm-up
    tasks too), a classic group converting to a consumer group and back (`type_changed`),
    and one `rebalance` line per rebalance with its duration and its reason (who joined
    or left, a changed subscription, new partitions, a static member restarted, or no
    membership change).

    Observation only: it never joins, heartbeats, leaves or commits. Two witnesses:
    describe polls each group type's describe API (batched per coordinator, every
    --interval); the records: a tail of the group coordinator's own records in
    __consumer_offsets (long-poll Fetch, no interval): every change as the coordinator
    writes it, with the broker's timestamps (source "records"); it reads each partition
    from its earliest offset to know the groups as they are, tells them once, then every
    record after that;
    a leader move or broker restart resumes at the first record not read; it needs READ
    and DESCRIBE on topic __consumer_offsets. --source auto (the default) tells one story
    from both where the principal may read __consumer_offsets: each round once, as the
    records tell it, with what only describe sees (a classic round's PreparingRebalance
    and CompletingRebalance states, source "describe", and its start, so its duration is
    an interval bounded by the looks, `duration_source` "records+describe"); where it may
    not (or the records cannot be read), describe alone. One line on stderr says which,
    and with describe alone why and what it cannot see. --source describe / records: that witness alone (records without the ACL:
    exit 4 naming it). A live view on
    a terminal; one line per event otherwise; -o ndjson streams the events (docs/reference/events.md).
    A broker restart or coordinator move is said once on stderr; the watch reconnects
    with back-off and carries on without repeating events. A deleted group is a `state`
    Dead event. Ctrl-C / SIGTERM or the end of --duration: exit 0, with a summary per
    group (rebalances, time spent rebalancing, members that flapped; -o yaml: YAML, -o
    json/ndjson: JSON lines). A closed pipe (`| head -1`): exit 0 at once, no summary.
    --record FILE must be writable (exit 2 otherwise, before anything is sent). A named
    group the principal may not describe: exit 4 at once (a gate never passes on a group
    it cannot see).
    A group that does not exist at the first look is said on stderr and watched for until
    it appears; with --must-exist the watch ends there, exit 5.
    --max-rebalances N (with --duration): exit 8 as soon as a group rebalances more than
    N times, e.g. `groupctl watch orders --duration 600 --max-rebalances 2 || rollback`.
    --metrics-port PORT: also serve Prometheus metrics of the same story on
    http://HOST:PORT/metrics (per group, labelled with the cluster id: state and when it
    was entered, generation or epochs, members, members behind their target, rebalances
    by reason kind and their durations, unowned-partition time, the last rebalance's
    time; groupctl's own: up, describe rounds and their duration, failed rounds, contact
    lost, groups followed; docs/reference/metrics.md lists every metric; fleet-level
    series for every group: groups by type and state, groups rebalancing now, rebalances
    by reason kind, unowned time; per-group series for the groups of
    --metrics-groups/--metrics-regex minus --metrics-ignore-regex, by default every named
    group, or with --all the first 1000 groups seen) and /healthz (200 while the last
    describe round succeeded; 503 before the first and from the first failed round:
    contact lost). A port that cannot be bound: exit 2.
    The server answers GET and HEAD only (405 otherwise), with a bounded pool of threads
    and timeouts; on loopback the Host header must name a loopback address. With
    --metrics-host beyond loopback give --web-config FILE (the Prometheus web
    configuration file: TLS certificate and key, basic_auth_users with bcrypt hashes).
    --view top: one row per group, most recent activity first (state, type, members,
    generation or group/assignment epochs, rebalances in the last 5 minutes, the last
    rebalance's age, members behind their target), as many as the terminal holds and a
    footer counting the rest; the default (auto) is top with --all, and for named groups
    once they no longer fit the terminal in full.
    --lag: also read every watched group's lag on its own interval (--lag-interval S,
    default 10 s; batched OffsetFetch and ListOffsets per partition leader, read-only):
    each `rebalance` event gets `lag_before` and `lag_after` (the group's total lag read
    nearest the round's start and first after its end, null when unknown), and with
    --metrics-port the lag per group and topic (groupctl_group_lag,
    groupctl_group_topic_lag, groupctl_group_lag_max); on a
    terminal, a lag line under each group shown in full and a LAG column in the top view."""
    from ..observe.watch import WatchSettings
    from ..render.watch import VIEWS

    env = env_of(ctx)
    if source not in ("auto", "describe", "records"):
        raise UsageError(f"--source must be auto, describe or records, not {source!r}")
    if source == "records" and interval is not None:
        raise UsageError("--interval is for --source auto or describe: the records are "
                         "tailed as they are written, with no interval")
    settings = WatchSettings(groups=list(dict.fromkeys(groups or [])), all_groups=all_groups,
                             regex=_regex(regex, all_groups),
                             interval=1.0 if interval is None else interval,
                             duration=duration, max_rebalances=max_rebalances, source=source,
                             lag_interval=_lag_interval(lag, lag_interval),
                             must_exist=must_exist)
    _check(settings)
    if view not in VIEWS:
        raise UsageError(f"--view must be one of {', '.join(VIEWS)}, not {view!r}")
    metrics_server_options.check(metrics_port, web_config)
    select = _selection(settings, metrics_port, metrics_groups, metrics_regex, metrics_ignore)
    return _run(env, settings, record, (metrics_host, metrics_port, web_config), view,
                select)


def _selection(settings, port, names, allowed, ignored):
    """Which groups get per-group series (observe/sinks/metrics_fleet.py): what the options
    name; else every named group; with --all/--regex, up to the default limit."""
    from ..observe.sinks.metrics_fleet import GroupSelection

    if port is None and (names or allowed or ignored):
        raise UsageError("--metrics-groups/--metrics-regex/--metrics-ignore-regex need "
                         "--metrics-port")
    import re
    for text in (allowed or []) + (ignored or []):
        try:
            re.compile(text)
        except re.error as exc:
            raise UsageError(f"bad metrics regex {text!r}: {exc}") from None
    if names or allowed or settings.all_groups:
        return GroupSelection(names or (), allowed or (), ignored or ())
    return GroupSelection(ignored=ignored or (), limit=None)


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


def _lag_interval(lag: bool, interval: float | None) -> float | None:
    from ..observe.sources.lag import DEFAULT_INTERVAL

    if interval is not None and not lag:
        raise UsageError("--lag-interval needs --lag")
    if interval is not None and not interval > 0:  # nan too
        raise UsageError("--lag-interval must be positive")
    if not lag:
        return None
    return DEFAULT_INTERVAL if interval is None else interval


def _check(s) -> None:
    if s.all_groups and s.groups:
        raise UsageError("give GROUP names or --all, not both")
    if not s.all_groups and not s.groups:
        raise UsageError("name the groups to watch, or --all")
    if not s.interval > 0:  # nan too
        raise UsageError("--interval must be positive")
    if s.duration is not None and not s.duration > 0:  # nan too
        raise UsageError("--duration must be positive")
    if s.max_rebalances is not None and (s.duration is None or s.max_rebalances < 0):
        raise UsageError("--max-rebalances needs --duration and a number >= 0")
    if s.must_exist and s.all_groups:
        raise UsageError("--must-exist is for named groups, not --all")


def _run(env, settings, record: str | None,
         metrics_at: tuple[str, int | None, str | None], view: str = "auto",
         select=None) -> int:
    from ..observe.watch import ConditionViolated, Watcher
    from ..render.live import open_sinks
    from ..render.watch_lines import summary_text
    from .common import make_cluster, run_async
    from .live import follow, open_record

    record_file = open_record(record)   # a bad path: exit 2 before any work
    server = _bind_metrics(*metrics_at, select)   # a port that cannot be bound: exit 2, likewise
    box: dict = {}

    def notice(text: str) -> None:
        env.note(f"groupctl: watch: {text}")

    async def main():
        async with make_cluster(env) as cluster:
            with open_sinks(env, record_file, view, fleet=settings.all_groups) as sinks:
                box["sinks"] = sinks
                emit = sinks if server is None else server.metrics.tee(sinks)
                watcher = box["watcher"] = Watcher(cluster, settings, emit=emit, clock=env.clock.wall,
                                                   notice=notice,
                                                   poll_deadline=env.settings.timeout)
                if sinks.live is not None:   # the view draws the stories' own statuses
                    sinks.live.read_from(watcher.reducer.groups,
                                         lag=watcher.lag_source is not None)
                if sinks.live is not None and hasattr(watcher.source, "coordinator"):
                    sinks.live.coordinator_of = watcher.source.coordinator   # COORD column
                if server is not None:
                    _serve(server, watcher, notice)
                await follow(sinks, watcher.run())

    violated = None
    try:
        run_async(env, main(), timeout=None, signal_stops_cleanly=True)
    except ConditionViolated as exc:
        violated = exc
    finally:
        if record_file is not None:
            record_file.close()   # never opened by the sinks (no broker reachable, ...)
        if server is not None:
            server.close()
    watcher, sinks = box.get("watcher"), box.get("sinks")
    if watcher is not None and not (sinks is not None and sinks.reader_gone):
        # the end of --duration, exit 8, Ctrl-C or SIGTERM: what the watch saw
        env.stdout.write(summary_text(watcher.summaries(), env.settings.output))
        env.stdout.flush()
    if violated is not None:
        raise violated
    return 0


def _bind_metrics(host: str, port: int | None, web_config: str | None = None, select=None):
    if port is None:
        return None
    from ..observe.sinks.metrics import WatchMetrics
    from ..observe.state.reducer import Reducer

    return metrics_server_options.bind(
        WatchMetrics(Reducer(), followed=lambda: 0, select=select), host, port, web_config)


def _serve(server, watcher, notice) -> None:
    """Point the bound server's metrics at the watcher's reducer and rounds; start it."""
    metrics = server.metrics
    metrics.reducer = watcher.reducer
    metrics.followed = lambda: len(watcher.source.groups)
    watcher.source.on_round = metrics.round_done
    if watcher.lag_source is not None:
        from ..observe.sinks.lag_metrics import add_lag_metrics

        add_lag_metrics(metrics, watcher.lag_source)
    from .. import startup

    server.on_warm = startup.settled   # a fleet told and its scrape built: long-lived
    server.start()
    for line in server.serving():
        notice(line)
