"""`groupctl join GROUP [--watch]`: join a consumer group as a probe member, with the
group's own protocol: classic (JoinGroup/SyncGroup) or consumer (KIP-848,
ConsumerGroupHeartbeat; the broker assigns, the probe reconciles and acknowledges).

Without --watch: describe the group, join it (offering its current assignor with an empty
subscription unless --topics), wait for the first synced generation (at most --timeout
seconds, or the rebalance timeout when that is longer), print what the join showed, leave.
With --watch: stay in the group and show each generation as it comes (a live view on a
terminal, plain lines otherwise, events with -o ndjson), until --duration ends (exit
0) or Ctrl-C / SIGTERM (leave, then exit 0: the normal way to stop a watch), or until
stdout's reader goes (`| head -1`: leave, exit 0). --record FILE writes the events too
(a path that cannot be written: exit 2 before joining). The probe always leaves the
group on exit.
"""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import GroupctlError, UsageError
from ..exitcodes import ExitCode
from .app import app
from .env import env_of
from .group_ids import check as check_group_ids

_TOPICS_HELP = ("Subscribe to these topics (comma-separated). Default: none, the probe wants "
                "no partitions (classic: an empty subscription; consumer protocol: "
                "'groupctl:no-partitions', a name no topic can have).")


@app.command("join")
def join(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="The consumer group to join.",
                                callback=check_group_ids),
    topics: Optional[str] = typer.Option(None, "--topics", metavar="T,...", help=_TOPICS_HELP),
    protocol: Optional[str] = typer.Option(
        None, "--protocol", metavar="classic|consumer",
        help="Group protocol: classic (JoinGroup/SyncGroup) or consumer (KIP-848, "
             "ConsumerGroupHeartbeat). Default: the group's own type (described first); "
             "a new group is joined with classic."),
    topic_regex: Optional[str] = typer.Option(
        None, "--topic-regex", metavar="RE",
        help="Consumer protocol only: subscribe to the topics matching RE (RE2 syntax, "
             "evaluated by the broker)."),
    assignor: Optional[str] = typer.Option(
        None, "--assignor", metavar="NAME",
        help="Classic: offer only this assignor (default: the group's current one, or every "
             "built-in assignor for a new group). Consumer protocol: the server assignor, "
             "uniform or range (default: the broker's)."),
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
    yes: bool = typer.Option(False, "--yes", "-y", help="Join even a group that does not "
                             "exist (creating it) without asking or warning."),
):
    """Join GROUP as a probe member, print what the join showed, and leave.

    This CHANGES the group's membership: joining costs the group a rebalance, leaving another.
    The probe never commits offsets and never fetches records; it always leaves on exit
    (Ctrl-C, SIGTERM, --duration, an error). If the broker elects it leader it runs the
    group's assignor as the Java client would (range, roundrobin, sticky,
    cooperative-sticky; members with an empty subscription, like the probe, get nothing);
    for any other assignor it leaves at once (exit 7). With --watch: it leaves and exits 0
    when --duration is reached, on Ctrl-C / SIGTERM, or when stdout's reader goes (a
    closed pipe, `| head -1`).

    The protocol follows the group's type (described first): a consumer (KIP-848) group is
    joined with ConsumerGroupHeartbeat (member epoch 0; unless --topics/--topic-regex it
    subscribes to 'groupctl:no-partitions', a name no topic can have, so the broker's
    assignor gives it nothing: never an empty subscription, which Kafka 4.3 mis-assigns
    around; needs DESCRIBE on that name under an authorizer), a classic group with
    JoinGroup; a new group with classic unless --protocol consumer. In a consumer group the
    one-shot join waits until its assignment is acknowledged and prints the group epoch,
    the assignment epoch, its member epoch and its assignment; it leaves with member epoch
    -1 (a static member, --instance-id, with -2: its partitions wait for it).

    --watch tells the rebalance story the passive `watch` tells, through the same code:
    every member's assignment diff (classic: from a describe in each generation; consumer
    groups: every member's current vs target assignment as each converges, with its
    reconciliation time, `reconciled_ms`, from the target being set to the member holding
    it). A routine REBALANCE_IN_PROGRESS on the heartbeat is how a classic member learns of
    a rebalance: it is in the events, not shown as an error.

    A group that does not exist would be created with the probe as its leader: on a
    terminal join asks first; otherwise it warns on stderr and joins (--yes: neither)."""
    from ..coordinator.probe import ProbeSettings

    env = env_of(ctx)
    _check(protocol, watch, duration, record, instance_id)
    _check_assignor(assignor, protocol)
    settings = ProbeSettings(
        group=group, topics=_topics(topics), assignor=assignor, instance_id=instance_id,
        session_timeout_ms=_ms(session_timeout, "--session-timeout"),
        rebalance_timeout_ms=_ms(rebalance_timeout, "--rebalance-timeout"),
        protocol=protocol, topic_regex=_regex(topic_regex, topics, protocol))
    from .live import open_record

    record_file = open_record(record)   # a bad path: exit 2 before any broker is asked
    try:
        _confirm_new_group(env, group, yes)
        if watch:
            return _watch(env, settings, duration, record_file)
        return _join_once(env, settings)
    except GroupctlError as exc:
        from ..observe.reads.errors import not_authorized

        raise not_authorized(exc, "join", group) from None


class _NotJoined(GroupctlError):
    """The user answered no: nothing was joined (exit 130, as a declined confirmation)."""
    exit_code = ExitCode.INTERRUPTED


def _confirm_new_group(env, group: str, yes: bool) -> None:
    """Joining a group that does not exist creates it, the probe its only member and
    leader: more often a typo than the intent. On a terminal ask; a script is warned on
    stderr and goes on (a script that means it passes --yes: no question, no describe).
    When the describe fails the probe goes on and reports its own errors, except when no
    broker answered in time: that is the command's answer (exit 3 or 6)."""
    if yes:
        return
    from ..observe.reads.snapshot import group_snapshot
    from .common import make_cluster, run_async

    async def main():
        async with make_cluster(env) as cluster:
            return await group_snapshot(cluster, group)

    try:
        if run_async(env, main()) is not None:
            return
    except GroupctlError as exc:
        # No broker reachable, or the deadline spent: the join would only spend a second
        # --timeout finding the same (the command must end within one).
        if exc.exit_code in (ExitCode.UNREACHABLE, ExitCode.TIMEOUT, ExitCode.INTERRUPTED):
            raise
        return
    what = (f"group {group!r} does not exist: joining creates it, with the probe as its only "
            "member and leader")
    if not (env.stdin_is_terminal and env.stderr_is_terminal and env.stdin is not None):
        env.warn(f"{what} (--yes: no warning)")
        return
    env.note(f"groupctl: {what}. Join anyway? [y/N] ", end="")
    if (env.stdin.readline() or "").strip().lower() not in ("y", "yes"):
        raise _NotJoined(f"join: not confirmed; group {group!r} was not created")


def _check_assignor(name: str | None, protocol: str | None) -> None:
    """An assignor the probe could not run if elected leader (classic), or a server assignor
    the broker does not have (consumer), is a usage error found before anything is sent
    (else the probe would join, maybe lead, and have to leave: exit 7). When the protocol
    comes from the group's type, either kind passes here; the member checks its own."""
    if name is None:
        return
    from ..coordinator.assignors import ASSIGNORS
    from ..coordinator.members.consumer import SERVER_ASSIGNORS

    if protocol == "consumer" and name not in SERVER_ASSIGNORS:
        raise UsageError(f"--assignor {name!r}: a consumer-protocol (KIP-848) group uses a "
                         f"server assignor: {', '.join(SERVER_ASSIGNORS)}")
    if protocol == "classic" and name not in ASSIGNORS:
        raise UsageError(f"--assignor {name!r}: groupctl runs only {', '.join(ASSIGNORS)} "
                         "(the Java client's built-in assignors)")
    if protocol is None and name not in (*ASSIGNORS, *SERVER_ASSIGNORS):
        raise UsageError(f"--assignor {name!r}: groupctl runs only {', '.join(ASSIGNORS)} "
                         f"(the Java client's built-in assignors) in classic groups, and "
                         f"names the server assignors {', '.join(SERVER_ASSIGNORS)} in "
                         f"consumer groups")


def _regex(regex: str | None, topics: str | None, protocol: str | None) -> str | None:
    if regex is None:
        return None
    if not regex:
        raise UsageError("--topic-regex must not be empty")
    if topics is not None:
        raise UsageError("--topics and --topic-regex exclude each other")
    if protocol == "classic":
        raise UsageError("--topic-regex needs the consumer protocol (KIP-848)")
    return regex


def _topics(text: str | None) -> list[str]:
    from ..coordinator.probe.setup import parse_topics

    return parse_topics(text)


_MAX_MS = 2**31 - 1  # the wire's INT32 of milliseconds


def _ms(seconds: float, option: str) -> int:
    # `not 0 < ...` also rejects nan (which compares false to everything)
    if not 0 < seconds * 1000 <= _MAX_MS:
        raise UsageError(f"{option} must be positive and at most {_MAX_MS // 1000} s")
    return int(seconds * 1000)


def _check(protocol: str | None, watch: bool, duration, record, instance_id) -> None:
    if protocol is not None and protocol not in ("classic", "consumer"):
        raise UsageError(f"--protocol {protocol!r}: choose classic or consumer")
    if not watch and (duration is not None or record is not None):
        raise UsageError("--duration and --record need --watch")
    if duration is not None and not duration > 0:  # nan too
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


def _watch(env, settings, duration: float | None, record_file) -> int:
    from ..coordinator.probe import Probe
    from ..render.live import open_sinks
    from .common import make_cluster, run_async
    from .live import follow

    async def main():
        async with make_cluster(env) as cluster:
            with open_sinks(env, record_file) as sinks:
                probe = Probe(cluster, settings, emit=sinks, clock=env.clock)
                if sinks.live is not None:   # the view draws the probe's one fold of the group
                    sinks.live.read_from({settings.group: probe.view.status})
                await follow(sinks, probe.watch(duration_s=duration))

    try:
        run_async(env, main(), timeout=None, signal_stops_cleanly=True)
    finally:
        if record_file is not None:
            record_file.close()   # never opened by the sinks (no broker reachable, ...)
    return 0
