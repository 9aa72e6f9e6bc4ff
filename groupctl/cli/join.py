"""`groupctl join GROUP [--watch]`: join a classic consumer group as a probe member.

Without --watch: describe the group, join it (offering its current assignor with an empty
subscription unless --topics), wait for the first synced generation (at most --timeout
seconds, or the rebalance timeout when that is longer), print what the join showed, leave.
With --watch: stay in the group and show each generation as it comes (a live view on a
terminal, plain lines otherwise, §4 events with -o ndjson), until --duration ends (exit
0) or Ctrl-C / SIGTERM (leave, then exit 0: the normal way to stop a watch). --record FILE writes the events too.
The probe always leaves the group on exit.
"""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import GroupctlError, UsageError
from .app import app
from .env import env_of

_TOPICS_HELP = ("Subscribe to these topics (comma-separated). Default: an empty subscription, "
                "the probe wants no partitions.")


@app.command("join")
def join(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="The consumer group to join."),
    topics: Optional[str] = typer.Option(None, "--topics", metavar="T,...", help=_TOPICS_HELP),
    protocol: str = typer.Option("classic", "--protocol", metavar="classic",
                                 help="Group protocol: classic (JoinGroup/SyncGroup)."),
    assignor: Optional[str] = typer.Option(
        None, "--assignor", metavar="NAME",
        help="Offer only this assignor (default: the group's current one, or every built-in "
             "assignor for a new group)."),
    instance_id: Optional[str] = typer.Option(
        None, "--instance-id", metavar="ID", help="Join as a static member (KIP-345)."),
    session_timeout: float = typer.Option(10.0, "--session-timeout", metavar="S",
                                          help="Session timeout in seconds (default 10)."),
    rebalance_timeout: float = typer.Option(30.0, "--rebalance-timeout", metavar="S",
                                            help="Rebalance timeout in seconds (default 30)."),
    watch: bool = typer.Option(False, "--watch", help="Stay in the group and show every "
                               "rebalance live until --duration ends or Ctrl-C."),
    duration: Optional[float] = typer.Option(None, "--duration", metavar="S",
                                             help="With --watch: leave after S seconds (exit 0)."),
    record: Optional[str] = typer.Option(None, "--record", metavar="FILE",
                                         help="With --watch: also write the events (ndjson) to FILE."),
):
    """Join GROUP as a probe member, print what the join showed, and leave.

    This CHANGES the group's membership: joining costs the group a rebalance, leaving another.
    The probe never commits offsets and never fetches records; it always leaves on exit
    (Ctrl-C, SIGTERM, --duration, an error). If the broker elects it leader it runs the
    group's assignor as the Java client would (range, roundrobin, sticky,
    cooperative-sticky; members with an empty subscription, like the probe, get nothing);
    for any other assignor it leaves at once (exit 7). With --watch: it leaves and exits 0
    when --duration is reached or on Ctrl-C / SIGTERM."""
    from ..coordinator.probe import ProbeSettings

    env = env_of(ctx)
    settings = ProbeSettings(
        group=group, topics=_topics(topics), assignor=assignor, instance_id=instance_id,
        session_timeout_ms=_ms(session_timeout, "--session-timeout"),
        rebalance_timeout_ms=_ms(rebalance_timeout, "--rebalance-timeout"))
    _check(protocol, watch, duration, record, instance_id)
    _check_assignor(assignor)
    try:
        if watch:
            return _watch(env, settings, duration, record)
        return _join_once(env, settings)
    except GroupctlError as exc:
        from ..observe.errors import not_authorized

        raise not_authorized(exc, "join", group) from None


def _check_assignor(name: str | None) -> None:
    """An assignor the probe could not run if elected leader is a usage error, found before
    anything is sent (else the probe would join, maybe lead, and have to leave: exit 7)."""
    if name is None:
        return
    from ..coordinator.assignors import ASSIGNORS

    if name not in ASSIGNORS:
        raise UsageError(f"--assignor {name!r}: groupctl runs only {', '.join(ASSIGNORS)} "
                         "(the Java client's built-in assignors)")


def _topics(text: str | None) -> list[str]:
    from ..coordinator.probe_setup import parse_topics

    return parse_topics(text)


def _ms(seconds: float, option: str) -> int:
    if seconds <= 0:
        raise UsageError(f"{option} must be positive")
    return int(seconds * 1000)


def _check(protocol: str, watch: bool, duration, record, instance_id) -> None:
    if protocol != "classic":
        raise UsageError(f"--protocol {protocol}: this build's probe speaks the classic "
                         f"protocol only (--protocol classic)")
    if not watch and (duration is not None or record is not None):
        raise UsageError("--duration and --record need --watch")
    if duration is not None and duration <= 0:
        raise UsageError("--duration must be positive")
    if instance_id == "":
        raise UsageError("--instance-id must not be empty")


def _join_once(env, settings) -> int:
    from ..coordinator.probe import Probe
    from ..render.join import join_table
    from ..render.output import emit
    from .common import make_cluster, run_async

    limit = max(env.settings.timeout, settings.rebalance_timeout_ms / 1000)

    async def main():
        async with make_cluster(env) as cluster:
            return await Probe(cluster, settings, clock=env.clock).join_once(deadline_s=limit)

    result = run_async(env, main(), timeout=None)
    emit(env, result.to_dict(), join_table)
    return 0


def _watch(env, settings, duration: float | None, record: str | None) -> int:
    from ..coordinator.probe import Probe
    from ..render.watch import open_sinks
    from .common import make_cluster, run_async

    async def main():
        async with make_cluster(env) as cluster:
            with open_sinks(env, record) as sink:
                await Probe(cluster, settings, emit=sink, clock=env.clock).watch(
                    duration_s=duration)

    run_async(env, main(), timeout=None, signal_stops_cleanly=True)
    return 0
