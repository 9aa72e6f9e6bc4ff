"""`groupctl list` and `groupctl describe`: read-only views of the cluster's groups.

Heavy modules (asyncio, the client, rich) are imported inside the commands, so that
`groupctl --help` stays fast.
"""
from __future__ import annotations

from collections.abc import Sequence

import typer

from ..errors import UsageError
from .app import app
from .env import env_of
from .complete import complete_groups
from .group_ids import check as check_group_ids

_READ_ONLY = "Read-only: never changes the cluster."


def _split(values: list[str] | None) -> list[str]:
    """`--state Stable,Empty --state Dead` -> ['Stable', 'Empty', 'Dead']."""
    return [v.strip() for item in values or () for v in item.split(",") if v.strip()]


def check_choices(values: list[str], known, option: str) -> list[str]:
    """Filter values, any case, in Kafka's spelling; a value not in `known` is a usage
    error naming the valid ones (a typo must not look like an empty cluster to a script)."""
    by_lower = {k.lower(): k for k in known}
    bad = [v for v in values if v.lower() not in by_lower]
    if bad:
        raise UsageError(f"{option} {bad[0]!r} is not one of {', '.join(known)}")
    return [by_lower[v.lower()] for v in values]


def _regex(text: str | None):
    if text is None:
        return None
    import re

    try:
        return re.compile(text)
    except re.error as exc:
        raise UsageError(f"--regex {text!r} is not a regular expression: {exc}") from None


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    state: list[str] | None = typer.Option(  # noqa: B008 - typer idiom
        None, "--state", metavar="S[,S...]",
        help="Only groups in these states (Stable, Empty, PreparingRebalance, "
             "CompletingRebalance, Assigning, Reconciling, Dead); any case."),
    type_: list[str] | None = typer.Option(  # noqa: B008
        None, "--type", metavar="T[,T...]", help="Only groups of these types (classic, consumer, share, streams)."),
    regex: str | None = typer.Option(None, "--regex", metavar="RE",
                                        help="Only groups whose id matches RE (Python re.search)."),
):
    """Every group on the cluster (asks every broker), with state, type and protocol type,
    sorted by group id. If some brokers fail, prints the groups of the others, then exits 7.
    """
    from .. import startup
    from ..observe.reads.listing import STATES, TYPES, failures_error, list_groups
    from ..render.output import emit
    from .common import make_cluster, run_async

    startup.one_shot()  # a result held until printed, then exit: startup.py
    env = env_of(ctx)
    pattern = _regex(regex)
    states = check_choices(_split(state), STATES, "--state")
    types = check_choices(_split(type_), TYPES, "--type")

    async def main():
        async with make_cluster(env) as cluster:
            return await list_groups(cluster, states=states, types=types, regex=pattern)

    result = run_async(env, main())
    wide_rows = [g.to_dict() | {"coordinator_id": g.coordinator_id} for g in result.groups]

    def table(console, _data, wide):
        from ..render.groups import list_table

        list_table(console, wide_rows, wide)

    emit(env, [g.to_dict() for g in result.groups], table)
    error = failures_error(result.failures)
    if error is not None:
        raise error


@app.command("describe")
def describe_cmd(
    ctx: typer.Context,
    groups: list[str] | None = typer.Argument(  # noqa: B008
        None, metavar="GROUP", autocompletion=complete_groups, show_default=False,
        help="Group ids to describe.", callback=check_group_ids),
    all_: bool = typer.Option(False, "--all", help="Every group on the cluster."),
    regex: str | None = typer.Option(None, "--regex", metavar="RE",
                                        help="With --all: only groups whose id matches RE."),
    type_: list[str] | None = typer.Option(  # noqa: B008
        None, "--type", metavar="T[,T...]",
        help="With --all: only groups of these types (classic, consumer, share, streams)."),
):
    """One or more groups' whole truth, for every group type: state, type, assignor,
    generation (classic) or group and assignment epochs (consumer, share, streams),
    coordinator and __consumer_offsets partition, members with decoded subscriptions and
    assignments (target assignments for consumer groups; each member's protocol, shown as
    a column when a consumer group still holds classic members), and per-partition
    committed offset, log-end offset and lag (null without a commit). Share groups: members
    that share a partition, share-partition start offsets and the lag the broker reports.
    Streams groups: topology (subtopologies with source, repartition and changelog topics)
    and each member's process, endpoint and active/standby/warm-up tasks, current and
    target. A group in the middle of a rebalance is shown as far as it is known.
    Exit 5 for an unknown group; when some of several groups fail, prints the others and
    exits 5 if every failure is a group not found, else 7. Read-only: never changes the cluster."""
    env = env_of(ctx)
    if all_ and groups:
        raise UsageError("give group ids or --all, not both")
    if not all_ and not groups:
        raise UsageError("give one or more group ids, or --all")
    if regex is not None and not all_:
        raise UsageError("--regex goes with --all")
    if type_ and not all_:
        raise UsageError("--type goes with --all")
    _describe(env, list(groups or ()), all_, _regex(regex), _types(type_))


def _types(values: list[str] | None) -> list[str]:
    """--type values, each one of Kafka's group types (any case)."""
    if not values:
        return []   # describing named groups imports no listing
    from ..observe.reads.listing import TYPES

    return check_choices(_split(values), TYPES, "--type")


def _describe(env, groups: list[str], all_: bool, pattern, types: Sequence[str] = ()) -> None:
    from .. import startup
    from ..observe.reads.describe import describe_groups
    from .common import make_cluster, run_async

    startup.one_shot()  # a result held until printed, then exit: startup.py

    async def main(progress):
        async with make_cluster(env) as cluster:
            d = cluster.deadline()
            listed = None
            names = groups
            if all_:  # listing imported only here: describing named groups needs none
                from ..observe.reads.listing import list_groups

                listed = await list_groups(cluster, regex=pattern, types=types, deadline=d)
                names = [g.group for g in listed.groups]
            listings = {g.group: g for g in listed.groups} if listed else None
            if names:
                progress.start(len(names))
            described = await describe_groups(cluster, names, listings=listings, deadline=d,
                                              progress=progress.advance)
            return listed, described

    with _Progress(env) as progress:
        listed, described = run_async(env, main(progress))
    if described.groups or all_ or not described.failures:
        _emit_groups(env, described.groups)
    _raise_failures(env, listed, described, all_)


def _emit_groups(env, groups: list) -> None:
    """The described groups in the -o format. json and ndjson are written one group at a
    time (describe --all over a fleet: no dict of every group held at once)."""
    fmt = env.settings.output
    if fmt in ("json", "ndjson"):
        from ..render.output import write_json_items

        write_json_items(env.stdout, (g.to_dict() for g in groups),
                         indent=2 if fmt == "json" else None)
        env.stdout.flush()
        return
    from ..render.output import emit

    emit(env, [g.to_dict() for g in groups], _describe_table)


def _describe_table(console, data, wide):
    from ..render.groups import describe_tables

    if not data:
        console.print("no groups")
        return
    describe_tables(console, data, wide)


def _raise_failures(env, listed, described, all_: bool) -> None:
    """Report failed groups (all but the last error on stderr) and raise one error: the
    group's own when nothing was described, else a PartialFailure (exit 7)."""
    failures = dict(described.failures)
    if not failures and not listed:
        return  # the common case: nothing to report (and no imports for it)
    from ..errors import NotFoundError
    from ..observe.reads.errors import PartialFailure
    from ..observe.reads.listing import failures_error

    if all_:  # a group listed a moment ago and gone now is not a failure
        failures = {g: e for g, e in failures.items() if not isinstance(e, NotFoundError)}
    broker_error = failures_error(listed.failures) if listed else None
    errors = list(failures.values()) + ([broker_error] if broker_error else [])
    if not errors:
        return
    if not described.groups and not all_:
        for exc in errors[:-1]:
            env.note(f"groupctl: error: {exc}")
        raise errors[-1]
    for exc in errors:
        env.note(f"groupctl: error: {exc}")
    total = len(described.groups) + len(failures)
    if not broker_error and all(isinstance(e, NotFoundError) for e in errors):
        # only missing groups: the exit code says so (5), as for one missing group
        raise NotFoundError(f"{len(failures)} of {total} groups not found")
    parts = [f"{len(failures)} of {total} groups could not be described"] if failures else []
    parts += ["some brokers could not list their groups"] if broker_error else []
    raise PartialFailure("; ".join(parts), failures)


class _Progress:
    """A progress bar on stderr while many groups are fetched, on a terminal only."""

    def __init__(self, env):
        self.enabled = env.stdout_is_terminal and env.stderr_is_terminal
        self.env = env
        self._bar = None
        self._task = None

    def __enter__(self):
        return self

    def start(self, total: int) -> None:
        if not self.enabled or total < 2:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(TextColumn("describing"), BarColumn(), MofNCompleteColumn(),
                             console=self.env.console(stderr=True), transient=True)
        self._task = self._bar.add_task("groups", total=total)
        self._bar.start()

    def advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, n)

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()
