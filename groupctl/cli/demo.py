"""`groupctl demo`: the quick start on a local lab.

Starts (or reuses) a lab, runs a workload of three real librdkafka consumers with churn
in one group, shows `describe` of that group once the consumers hold every partition,
runs the probe with `join --watch` beside the churning workload, stops the churn, forces
one rebalance (`force-rebalance --yes`), waits until the group is Stable and settled
(`wait --state Stable --settled 2`), describes the group once more, and stops everything it
started. It ends by itself.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Optional, TextIO, cast

import typer

from ..errors import DeadlineError, UsageError
from .app import app
from .env import env_of

DEMO_LAB = "demo"


@app.command("demo")
def demo(
    ctx: typer.Context,
    watch_seconds: float = typer.Option(20.0, "--watch-seconds", metavar="S",
                                        help="How long the probe watches the churning group."),
    churn: float = typer.Option(6.0, "--churn", metavar="S",
                                help="Every S seconds one consumer leaves or rejoins."),
    keep: bool = typer.Option(False, "--keep", help="Leave the demo lab running afterwards."),
    lab_name: Optional[str] = typer.Option(None, "--lab", help="Use this running lab "
                                           "instead of starting the `demo` lab."),
):
    """The quick start: a local Kafka lab, three real consumers that join and leave a group,
    `describe` of the group, the probe (`join --watch`) watching it rebalance, then one
    `force-rebalance` and a `wait --state Stable` before the last describe. Joins the demo
    group as a probe member and forces one rebalance of it (it changes that group, nothing
    else)."""
    env = env_of(ctx)
    if env.stderr is sys.stderr:
        env.stderr = cast(TextIO, _CurrentStderr())  # duck-typed: write/flush/isatty/fileno
    lab, started = _lab(env, lab_name)
    stopped = False
    try:
        code = _run(env, lab.bootstrap, watch_seconds, churn)
    finally:
        if started and not keep:
            from ..lab.cluster import down

            down(lab.name)
            stopped = True
            env.stderr.write(f"groupctl: demo: lab {lab.name} stopped (server log: {lab.log_file})\n")
    if stopped:
        _say(env, "done. `groupctl demo --keep` leaves the lab running to try groupctl on it "
                  "(`groupctl lab status --name demo` names its bootstrap)")
    else:
        _say(env, f"done. The lab {lab.name} still runs; try: groupctl -b {lab.bootstrap} list "
                  f"(stop it: groupctl lab down --name {lab.name})")
    return code


class _CurrentStderr:
    """stderr looked up at each write: while the probe's live view runs, rich's Live has
    replaced sys.stderr with a proxy that prints above the view, so the workload's lines
    (written from its thread at any moment) do not tear the view's frames."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()

    def fileno(self) -> int:
        assert sys.__stderr__ is not None
        return sys.__stderr__.fileno()


def _lab(env, name: str | None):
    from ..lab.cluster import Lab

    if name:
        lab = Lab.load(name)
        if lab is None:
            raise UsageError(f"no lab named {name!r} is running "
                             f"(`groupctl lab up --name {name}` starts one)")
        return lab, False
    lab = Lab.load(DEMO_LAB)
    if lab is not None:
        return lab, False
    _say(env, "starting a one-node Kafka lab (first run fetches the jars with Maven)")
    lab = Lab.up(name=DEMO_LAB, brokers=1,
                 progress=lambda msg: env.stderr.write(f"groupctl: lab: {msg}\n"))
    _say(env, f"lab is up at {lab.bootstrap}; broker log {lab.log_file}")
    return lab, True


def _say(env, text: str) -> None:
    env.stderr.write(f"groupctl: demo: {text}\n")
    env.stderr.flush()


def _run(env, bootstrap: str, watch_seconds: float, churn: float) -> int:
    from .app import invoke

    suffix = time.strftime("%H%M%S")
    group, topic, partitions = f"demo-group-{suffix}", f"demo-orders-{suffix}", 6
    workload = _Workload(env, bootstrap, group, topic, partitions, churn)
    workload.start()
    try:
        workload.wait_covered(timeout=60.0)
        _say(env, f"three consumers hold all {partitions} partitions; `groupctl describe {group}`:")
        code = invoke(["-b", bootstrap, "describe", group], env)
        _say(env, f"the probe joins {group} and watches for {watch_seconds:g}s while "
                  f"consumers come and go: `groupctl join {group} --watch`")
        workload.begin_churn()
        code = invoke(["-b", bootstrap, "join", group, "--watch", "--duration",
                       f"{watch_seconds:g}"], env) or code
        workload.end_churn()
        _say(env, f"the churn stops; groupctl forces one rebalance and reports what it cost "
                  f"(one new generation, same members): `groupctl force-rebalance {group} --yes`")
        code = invoke(["-b", bootstrap, "force-rebalance", group, "--yes", "--reason",
                       "the demo"], env) or code
        _say(env, f"a deploy script would now wait for a calm group: `groupctl wait {group} "
                  f"--state Stable --settled 2`")
        code = invoke(["-b", bootstrap, "--timeout", "60", "wait", group, "--state", "Stable",
                       "--settled", "2"], env) or code
        _say(env, f"the group afterwards: `groupctl describe {group}`:")
        code = invoke(["-b", bootstrap, "describe", group], env) or code
    finally:
        workload.stop()
    return code


class _Workload:
    """run_workload on a thread; tracks each consumer's latest assignment from its callbacks."""

    def __init__(self, env, bootstrap, group, topic, partitions, churn):
        self.env, self.bootstrap, self.group, self.topic = env, bootstrap, group, topic
        self.partitions, self.churn = partitions, churn
        self._stop = threading.Event()
        self._churn_on = threading.Event()
        self._lock = threading.Lock()
        self._assigned: dict[str, set] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="demo-workload", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def begin_churn(self) -> None:
        self._churn_on.set()

    def end_churn(self) -> None:
        self._churn_on.clear()

    def _main(self) -> None:
        from ..lab.workload import run_workload

        try:
            run_workload(self.bootstrap, self.group, self.topic, consumers=3,
                         partitions=self.partitions, assignor="cooperative-sticky",
                         churn=None, rate=20.0, log=self._log, on_event=self._on_event,
                         stop=self._stop, churn_gate=self._churn_gate)
        except BaseException as exc:  # noqa: BLE001 - reported by wait_covered / stop
            self._error = exc

    def _churn_gate(self) -> float | None:
        # churn starts only once the probe is watching, so the first describe is calm
        return self.churn if self._churn_on.is_set() else None

    def _log(self, line: str) -> None:
        self.env.stderr.write(f"  [workload] {line}\n")
        self.env.stderr.flush()

    def _on_event(self, event: dict) -> None:
        with self._lock:
            self._assigned[event["client_id"]] = {(tp["topic"], p) for tp in event["assigned"]
                                                  for p in tp["partitions"]}

    def wait_covered(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._stop.wait(0.1):
            if self._error is not None:
                raise self._error
            with self._lock:
                owned = [tp for tps in self._assigned.values() for tp in tps]
                if len(self._assigned) == 3 and len(owned) == len(set(owned)) == self.partitions:
                    return
            if time.monotonic() > deadline:
                raise DeadlineError(f"the demo consumers did not get all partitions in {timeout:g}s")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
