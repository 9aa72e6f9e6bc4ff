"""Issue 19 on the lab broker: an eager classic group's cost as its clients tell it.

No observer of the broker sees when an eager member stops (it learns of the round at its
next heartbeat), so `watch` reports partitions x the round as an upper bound; `analyze
--client-logs` gives the clients' own figure, per partition from a client's revoke line to
the next member's assign line. Here: an eager `range` group of real librdkafka consumers
(confluent-kafka, each in its own process, `debug=cgrp` logging into a file as a user's
would) whose revoke and assign callbacks timestamp themselves on entry (ground truth);
one member joins, then one leaves. For each round, analyze's figure over the broker's log
and the clients' logs is within a few ms per handover of the callbacks' figure, and no
more than the describe source's upper bound. The same for a cooperative-sticky group
(incremental callbacks; a moved partition is revoked in one generation, assigned in the
next), where the describe source measures too.
"""
from __future__ import annotations

import csv
import subprocess
import sys

import pytest
from client_log_support import LoggedConsumer, balanced, truth
from waiting import wait_until
from watch_support import WatchProcess, stabilized

pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]

POLL_S = 0.5
# per handover: the log line is written when librdkafka hands the rebalance to the
# application, the callback stamps itself when poll() runs it: a queue hop at each end
# (and the log's millisecond truncation)
TOLERANCE_MS = 25
FIGURES: dict[str, dict] = {}


def _rebalance(watch, members: int, start: int, what: str):
    return watch.wait_event(lambda e: e["event"] == "rebalance"
                            and len(e["members_after"] or ()) == members, 90, what, start)


def _analyze(kafka, group: str, workdir) -> list[dict]:
    out = workdir / "analysis"
    proc = subprocess.run(
        [sys.executable, "-m", "groupctl", "analyze", "--broker-logs",
         *[str(p) for p in kafka.log_files], "--client-logs", str(workdir / "*.rdkafka.log"),
         "--group", f"^{group}$", "--master", "local[2]", "--out", str(out)],
        capture_output=True, text=True, timeout=840)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "episodes.csv") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_clients_figure_matches_their_callbacks(kafka, topic_factory, unique_group, tmp_path,
                                                assignor):
    g, topic = unique_group, topic_factory(6)
    every = [(topic, p) for p in range(6)]
    made: list[LoggedConsumer] = []
    eager = assignor == "range"

    def start(n: str) -> LoggedConsumer:
        made.append(LoggedConsumer(kafka.bootstrap, g, topic, f"{g}-{n}", tmp_path, assignor))
        return made[-1]

    rounds = []   # (name, generations, truth, the watch's rebalances)
    try:
        a, c = start("a"), start("c")
        wait_until(lambda: balanced([a, c], every), 60, "a and c sharing the partitions")
        first_gen = max(wait_until(lambda: stabilized(kafka, g), 30, "a Stabilized line"))
        watch = WatchProcess(kafka, g, "--interval", str(POLL_S))
        try:
            at, _ = watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Stable",
                                     30, "the first look")
            before_gen = first_gen
            for name, act, live, members in (
                    ("join", lambda: start("b"), lambda: made, 3),
                    ("leave", lambda: c.stop(), lambda: [a, made[2]], 2)):
                marks = {x.name: len(x.callbacks()) for x in made}
                act()
                done, _ = _rebalance(watch, members, at + 1, f"the rebalance of the {name}")
                wait_until(lambda live=live: balanced(live(), every), 60,
                           f"balanced after the {name}")
                gen = wait_until(lambda after=before_gen: max(stabilized(kafka, g)) > after
                                 and max(stabilized(kafka, g)), 30, "the round's Stabilized")
                told = [e for e in watch.out.items[at + 1:done + 1]
                        if e.get("event") == "rebalance"]
                rounds.append((name, range(before_gen + 1, gen + 1), truth(made, marks), told))
                at, before_gen = done, gen
        finally:
            assert watch.stop() == 0, watch.stderr()
    finally:
        for x in made:
            x.stop()

    episodes = _analyze(kafka, g, tmp_path)
    by_gen = {int(e["to_generation"]): e for e in episodes}
    for name, gens, (truth_ms, truth_max, handovers), told in rounds:
        eps = [by_gen[n] for n in gens]
        # a cooperative round's revoking generation hands nothing over: the giving one tells
        assert eps[-1]["client_unowned_basis"] == "client_logs", eps
        assert eager or all(e["client_unowned_basis"] == "" for e in eps[:-1]), eps
        eps = [e for e in eps if e["client_unowned_basis"]]
        assert all(e["client_unowned_basis"] == "client_logs" for e in eps), eps
        client_ms = sum(int(e["client_unowned_partition_ms"]) for e in eps)
        client_max = max(int(e["client_unowned_partitions_max_ms"]) for e in eps)
        # eager: every partition is revoked and assigned again; cooperative: the 2 moved
        assert sum(int(e["client_unowned_partitions"]) for e in eps) == handovers \
            == (6 if eager else 2)
        assert all(int(e["client_unassigned_partitions"]) == 0 for e in eps)
        assert abs(client_ms - truth_ms) <= TOLERANCE_MS * handovers, (name, client_ms, truth_ms)
        assert abs(client_max - truth_max) <= TOLERANCE_MS, (name, client_max, truth_max)
        # a generation completed between two looks is told as a round with no figures
        # (cooperative: the revoking one can be over before the next poll)
        unseen = [r for r in told if r["seen"] is False]
        assert all(r["unowned_partition_ms"] is None and r["unowned_basis"] is None
                   for r in unseen), unseen
        told = [r for r in told if r["seen"] is not False]
        told_ms = sum(r["unowned_partition_ms"] for r in told)
        # cooperative: measured when the looks saw each generation of the round Stable; when
        # they missed the revoking one, the revoked partitions changed owner unseen and the
        # figure is a bound over the looks' window (the clients' time lies within it)
        bases = [r["unowned_basis"] for r in told]
        assert told and set(bases) <= ({"upper_bound"} if eager
                                       else {"measured", "upper_bound"}), \
            [(r["from_generation"], r["to_generation"], r["unowned_basis"],
              r["unowned_partition_ms"]) for r in told]
        if set(bases) == {"upper_bound"}:
            assert client_ms <= told_ms, (name, client_ms, told)
        FIGURES[f"{assignor} {name}"] = {
            "generations": list(gens), "client_ms": client_ms, "callbacks_ms": round(truth_ms, 1),
            "client_max_ms": client_max, "callbacks_max_ms": round(truth_max, 1),
            f"describe_{told[0]['unowned_basis']}_ms": told_ms,
            "round_ms": int(eps[-1]["duration_ms"])}
    print("issue 19, the clients' figure:", FIGURES, file=sys.stderr)
