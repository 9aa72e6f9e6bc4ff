"""`groupctl force-rebalance`, `groupctl wait` and `groupctl remove-member`: steering a group
by hand and from scripts.

force-rebalance and remove-member change the group: on a terminal they ask first (showing
the group, its members and generation), elsewhere they need --yes (exit 2 without it).
wait only observes. Their own --timeout default is 60 s (the global default, 10 s, is too
short to see a group rebalance); an explicit --timeout wins.

Heavy modules are imported inside the commands, so `groupctl --help` stays fast.
"""
from __future__ import annotations

import os
from typing import Any, Optional

import typer

from ..errors import GroupctlError, UsageError
from ..exitcodes import ExitCode
from .app import app
from .env import env_of
from .complete import complete_groups
from .group_ids import check as check_group_ids

STEER_TIMEOUT = 60.0
PAUSE_ENV = "_GROUPCTL_PAUSE_AT"  # test hook: "PHASE:SECONDS" holds force-rebalance there


class NotConfirmed(GroupctlError):
    """The user answered no: nothing was changed (exit 130, as an interruption)."""
    exit_code = ExitCode.INTERRUPTED


def _timeout(ctx: typer.Context, env) -> float:
    """--timeout as given, else STEER_TIMEOUT."""
    root = ctx.find_root()
    source = root.get_parameter_source("timeout")
    given = source is not None and source.name != "DEFAULT"
    return env.settings.timeout if given else STEER_TIMEOUT


def _can_confirm(env, command: str, yes: bool) -> None:
    """UsageError (exit 2) up front when there is neither --yes nor a terminal to ask on."""
    if not yes and not (env.stdin_is_terminal and env.stdin is not None):
        raise UsageError(f"{command} changes the group and there is no terminal to confirm "
                         "on: pass --yes")


def _confirm(env, command: str, summary: str, question: str, yes: bool) -> None:
    """Go ahead with --yes; else ask on the terminal (anything but y/yes: NotConfirmed)."""
    if yes:
        return
    _can_confirm(env, command, yes)
    for line in summary.split("\n"):   # its own lines; a name's newline shown as \n
        env.note(line)
    env.note(f"{question} [y/N] ", end="")
    answer = (env.stdin.readline() or "").strip().lower()
    if answer not in ("y", "yes"):
        raise NotConfirmed(f"{command}: not confirmed; nothing was changed")


# the reason sent without --reason: the broker logs it, so it names nobody (no user, no
# host): who asked is for the operator to say, with --reason
DEFAULT_REASON = "no reason given"


def _snapshot_once(env, group: str, timeout: float):
    from ..observe.reads.snapshot import group_snapshot
    from .common import make_cluster, run_async

    async def main():
        async with make_cluster(env, timeout=timeout) as cluster:
            return await group_snapshot(cluster, group)

    return run_async(env, main(), timeout=timeout)


# ---- force-rebalance --------------------------------------------------------------------

@app.command("force-rebalance")
def force_rebalance_cmd(
    ctx: typer.Context,
    group: str = typer.Argument(..., metavar="GROUP", help="The group to rebalance.",
                                autocompletion=complete_groups, callback=check_group_ids),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation "
                             "(required when stdin is not a terminal)."),
    reason: Optional[str] = typer.Option(
        None, "--reason", metavar="TEXT", help="KIP-800 reason, sent as `groupctl "
        "force-rebalance: TEXT` (default: no reason given; it names no user or host); the "
        "broker logs it."),
):
    """Trigger exactly one rebalance of a live group, wait until it is Stable again, and
    report generation (or epochs) before and after, time to Stable, members and every
    member's assignment before and after, and the partitions that moved.

    This CHANGES the group. Classic groups: groupctl joins (JoinGroup, which starts the
    rebalance) and leaves while its join is still parked, over a second connection, so the
    group completes ONE new generation with its own members. Cooperative assignors: a
    member that must give up partitions may start a follow-up rebalance itself; it is shown
    when it comes within --timeout. Consumer (KIP-848) groups have no stop-the-world
    rebalance: a transient member joins and leaves, which bumps the group epoch so the
    broker's assignor runs again; the members keep their partitions.

    Asks for confirmation on a terminal; needs --yes otherwise (exit 2). Exit 5 when the
    group does not exist or is Empty. A group that is rebalancing already is left to
    finish first (nothing is changed until it is Stable). Exit 6 when it is not Stable
    again within --timeout (default 60 s here; groupctl has left by then). Ctrl-C or
    SIGTERM: groupctl leaves the group first (a rebalance it already started completes
    without it), then exits 130."""
    env = env_of(ctx)
    timeout = _timeout(ctx, env)
    _can_confirm(env, "force-rebalance", yes)
    text = f"groupctl force-rebalance: {reason if reason else DEFAULT_REASON}"
    before = _live_group(env, group, timeout, "force-rebalance")
    if not yes:
        from ..render.steer import confirm_summary

        _confirm(env, "force-rebalance", confirm_summary(before),
                 f"Rebalance group {group} now?", yes)
    report = _force(env, group, text, timeout, reuse=before if yes else None)
    from ..render.output import emit
    from ..render.steer import force_rebalance_table

    data = report.to_dict()
    if not report.same_members:
        env.warn(f"the members of {group} changed during the rebalance: "
                 f"{len(data['members_before'])} before, {len(data['members_after'])} after")
    emit(env, data, force_rebalance_table)
    return 0


def _live_group(env, group: str, timeout: float, command: str):
    from ..errors import NotFoundError

    desc = _snapshot_once(env, group, timeout)
    if desc is None:
        raise NotFoundError(f"group {group!r} does not exist")
    if desc.state == "Empty" or not desc.members:
        raise NotFoundError(f"group {group!r} is Empty: {command} needs a live group")
    if desc.type not in ("classic", "consumer"):
        raise UsageError(f"{command} supports classic and consumer groups; {group!r} is a "
                         f"{desc.type} group")
    if desc.type == "classic" and desc.protocol_type not in ("consumer",):
        raise UsageError(f"{command} supports consumer-protocol groups; {group!r} has "
                         f"protocol type {desc.protocol_type!r}")
    return desc


def _force(env, group: str, reason: str, timeout: float, reuse):
    from ..coordinator.steer.common import STABLE_POLL_S
    from ..coordinator.steer.force_rebalance import force_rebalance
    from ..errors import DeadlineError, NotFoundError
    from ..observe.sources.poller import DescribePoller, looks
    from .common import make_cluster, run_async

    on_phase = _phase_reporter(env)

    async def main():
        async with make_cluster(env, timeout=min(timeout, 10.0)) as cluster:
            deadline = cluster.deadline(timeout)
            before = reuse
            if before is None or (before.members and before.state != "Stable"):
                # already rebalancing: let that finish first, so "before" is a Stable group
                before = None
                async for look in looks(DescribePoller(cluster, [group], interval=0.1,
                                                       deadline=deadline)):
                    before = look
                    if look is None or not look.members or look.state == "Stable":
                        break
                else:
                    raise DeadlineError(f"group {group!r} was not Stable within {timeout:g} s "
                                        f"(it is {getattr(before, 'state', 'missing')}); "
                                        f"nothing was changed")
            if before is None or not before.members:
                raise NotFoundError(f"group {group!r} is gone or Empty")
            await on_phase("described", {"state": before.state})
            # the group's own type's describe API only (issue 23: not all four)
            source = DescribePoller(cluster, [group], interval=STABLE_POLL_S,
                                    types={group: before.type}, deadline=deadline)
            return await force_rebalance(
                cluster, before, reason, deadline=deadline, on_phase=on_phase,
                snapshot=looks(source), log=_debug_line(env))

    return run_async(env, main(), timeout=None)


def _debug_line(env):
    """Under --debug: a writer of `groupctl: force-rebalance: LINE` on stderr (the member's
    transitions, each with its reason); else None."""
    if not env.settings.debug:
        return None

    def line(text: str) -> None:
        env.note(f"groupctl: force-rebalance: {text}")

    return line


def _phase_reporter(env):
    """Phase lines on stderr (a terminal, or --debug); the test hook's pause."""
    show = env.stderr_is_terminal or env.settings.debug
    environ = getattr(env, "environ", None) or os.environ
    pause_at, _, seconds = environ.get(PAUSE_ENV, "").partition(":")

    async def on_phase(name: str, info: dict) -> None:
        if show:
            extra = " ".join(f"{k}={v}" for k, v in info.items())
            env.note(f"groupctl: force-rebalance: {name} {extra}".rstrip(" "))
        if name == pause_at and seconds:
            import asyncio

            await asyncio.sleep(float(seconds))

    return on_phase


# ---- wait -------------------------------------------------------------------------------

@app.command("wait")
def wait_cmd(
    ctx: typer.Context,
    group: str = typer.Argument(..., metavar="GROUP", help="The group to watch.",
                                autocompletion=complete_groups, callback=check_group_ids),
    state: Optional[str] = typer.Option(
        None, "--state", metavar="STATE",
        help="Wait for this state, any case: classic Empty, PreparingRebalance, "
             "CompletingRebalance, Stable; consumer Empty, Assigning, Reconciling, Stable; "
             "share Empty, Stable; streams Empty, NotReady, Assigning, Reconciling, Stable; "
             "Dead (also a group that does not exist)."),
    members: Optional[int] = typer.Option(None, "--members", metavar="N",
                                          help="...with exactly N members."),
    generation_gt: Optional[int] = typer.Option(
        None, "--generation-gt", metavar="N",
        help="...with a generation (classic) or group epoch (other types) above N."),
    max_lag: Optional[int] = typer.Option(None, "--max-lag", metavar="N",
                                          help="...with a total lag of at most N."),
    settled: Optional[float] = typer.Option(
        None, "--settled", metavar="S",
        help="...held for S seconds with no change of state, members, generation or epoch."),
    interval: float = typer.Option(1.0, "--interval", metavar="S",
                                   help="Seconds between polls (default 1)."),
    must_exist: bool = typer.Option(False, "--must-exist",
                                    help="Exit 5 at once if the group does not exist "
                                         "(default: keep waiting, it may come)."),
):
    """Block until GROUP meets a condition; for deploy scripts.

    Polls the describe API of the group's type every --interval (and the committed and
    log-end offsets only with --max-lag). Exit 0 as soon as the condition holds, printing
    the group's state (or json); 6 when --timeout passes first (default 60 s here),
    printing the last state seen and naming each failing part; 5 for a missing group with
    --must-exist. A typo in --state is exit 2, and so is a state the group's type never
    has (a consumer group is never PreparingRebalance), at the first look.
    Read-only: never changes the cluster."""
    from ..observe.wait import Condition, parse_state

    env = env_of(ctx)
    timeout = _timeout(ctx, env)
    for name, value in (("--members", members), ("--generation-gt", generation_gt),
                        ("--max-lag", max_lag)):
        if value is not None and value < (-1 if name == "--generation-gt" else 0):
            raise UsageError(f"{name} must not be negative")
    if settled is not None and not settled > 0:  # nan too
        raise UsageError("--settled must be positive")
    if not interval > 0:  # nan too
        raise UsageError("--interval must be positive")
    cond = Condition(state=parse_state(state) if state is not None else None, members=members,
                     generation_gt=generation_gt, max_lag=max_lag, settled_s=settled,
                     must_exist=must_exist)
    if cond == Condition(must_exist=must_exist):
        raise UsageError("give a condition: --state, --members, --generation-gt, --max-lag "
                         "or --settled")
    if env.stderr_is_terminal:   # a person waits: say for what, and for how long
        env.note(f"groupctl: wait: {group}: {cond.describe()} (for up to {timeout:g} s) ...")
    outcome = _wait(env, group, cond, interval, timeout)
    from ..render.output import emit
    from ..render.steer import wait_line

    emit(env, outcome.to_dict(), wait_line)
    if not outcome.met:
        from ..errors import DeadlineError

        raise DeadlineError(f"group {group!r}: condition not met within {timeout:g} s: "
                            + "; ".join(outcome.verdict.failing))
    return 0


def _wait(env, group, cond, interval: float, timeout: float):
    from ..observe.wait import wait_for
    from .common import make_cluster, run_async

    async def main():
        async with make_cluster(env, timeout=min(timeout, 10.0)) as cluster:
            deadline = cluster.deadline(timeout)
            return await wait_for(cluster, group, cond, interval=interval, deadline=deadline,
                                  clock=env.monotonic)

    return run_async(env, main(), timeout=timeout)


# ---- remove-member ----------------------------------------------------------------------

@app.command("remove-member")
def remove_member_cmd(
    ctx: typer.Context,
    group: str = typer.Argument(..., metavar="GROUP", help="The group.",
                                autocompletion=complete_groups, callback=check_group_ids),
    instance_id: Optional[list[str]] = typer.Option(  # noqa: B008 - typer idiom
        None, "--instance-id", metavar="ID", help="Group instance id of a static member to "
        "remove (repeatable, or comma-separated)."),
    all_static: bool = typer.Option(False, "--all-static", help="Remove every static member "
                                    "(refused on a Stable group without --yes)."),
    reason: Optional[str] = typer.Option(
        None, "--reason", metavar="TEXT", help="KIP-800 reason, sent as `groupctl "
        "remove-member: TEXT` (default: no reason given; it names no user or host)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation "
                             "(required when stdin is not a terminal)."),
):
    """Remove static members (KIP-345) from GROUP: LeaveGroup v3+ on their behalf, naming
    their group instance ids, with a reason. The group rebalances at once instead of waiting
    for their session timeouts.

    This CHANGES the group. Per member result shown; an instance id the group does not know
    is exit 7 (UNKNOWN_MEMBER_ID, named), the others are still removed. Works for classic
    and consumer (KIP-848) groups: Kafka 4.x removes a static member of a consumer group
    through the same LeaveGroup and bumps the group epoch. Asks for confirmation on a
    terminal; needs --yes otherwise (exit 2). Exit 5 for a missing group."""
    env = env_of(ctx)
    timeout = env.settings.timeout
    ids = [i.strip() for item in instance_id or () for i in item.split(",") if i.strip()]
    if all_static and ids:
        raise UsageError("give --instance-id or --all-static, not both")
    if not all_static and not ids:
        raise UsageError("name the members: --instance-id ID (repeatable) or --all-static")
    _can_confirm(env, "remove-member", yes)
    from ..errors import NotFoundError

    desc = _snapshot_once(env, group, timeout)
    if desc is None:
        raise NotFoundError(f"group {group!r} does not exist")
    notes = []
    if all_static:
        if desc.state == "Stable" and not yes:
            raise UsageError(f"group {group!r} is Stable: --all-static removes live members; "
                             "pass --yes to do it anyway")
        ids = sorted({m.instance_id for m in desc.members if m.instance_id})
        if not ids:
            notes.append(f"group {group} has no static members: nothing to do")
    if ids:
        from ..render.steer import confirm_summary

        _confirm(env, "remove-member", confirm_summary(desc),
                 f"Remove {', '.join(ids)} from group {group}?", yes)
    text = f"groupctl remove-member: {reason if reason else DEFAULT_REASON}"
    data: dict[str, Any] = _remove(env, group, ids, text, timeout) if ids else {
        "group": group, "reason": text, "removed": [], "failed": [], "members": []}
    known = {m.instance_id: m.member_id for m in desc.members if m.instance_id}
    for m in data["members"]:
        m["member_id"] = m["member_id"] or known.get(m["instance_id"])
    data["notes"] = notes + ([] if desc.type != "consumer" or not ids else [
        "consumer (KIP-848) group: the broker removed the static members and bumped the "
        "group epoch; a member still running is fenced and rejoins as a new member"])
    from ..render.output import emit
    from ..render.steer import remove_member_table

    emit(env, data, remove_member_table)
    failed = [m for m in data["members"] if not m["removed"]]
    if failed:
        from ..client.errors import kafka_error

        names = ", ".join(f"{m['instance_id']} ({m['error']})" for m in failed)
        raise kafka_error("LeaveGroup", failed[0]["error_code"],
                          f"not removed from group {group!r}: {names}")
    return 0


def _remove(env, group: str, ids: list[str], reason: str, timeout: float) -> dict:
    from ..coordinator.steer.remove_members import remove_static_members
    from .common import make_cluster, run_async

    async def main():
        async with make_cluster(env, timeout=timeout) as cluster:
            return await remove_static_members(cluster, group, ids, reason)

    return run_async(env, main()).to_dict()
