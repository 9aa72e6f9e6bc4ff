"""One cell of the matrix: a witness's story of one scenario's group held against the truth.

A cell checks
- rounds: every round the broker logged (truth_ground) told exactly once, in order, with
  its generation or epoch where the witness gives one; none told that the broker did not
  make (a phantom), none twice. A round the witness cannot see is left out of the count
  and named ("cannot know: ...");
- durations: within a stated bound of the broker's (BOUND_MS + the witness's interval), or
  null; never 0 for a round the broker took time over;
- unowned time: no partition unowned longer than the round it belongs to (its broker
  duration + twice the interval + SYNC_MS, the members' SyncGroup after "Stabilized");
- unknown is null: a summary (or metric) never sums a null duration as 0.

verdict: "agree", "disagree" (text says what, in a few words), "cannot know" (text says
why; the rest agrees).
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from truth_ground import LogTruth, RecordRound, Round

BOUND_MS = 300      # a watch's figure may be off by its interval plus this
SYNC_MS = 500       # after "Stabilized": the leader's SyncGroup and the members' assign
EXACT_MS = 60       # the records' own timestamps against the broker's log line
CLOCK_MS = 5        # a look made after a change shows it: the log's ms against the look's


@dataclass
class Cell:
    verdict: str = "agree"
    problems: list[str] = field(default_factory=list)
    unknowable: list[str] = field(default_factory=list)       # rounds the witness cannot see
    figures_unknowable: list[str] = field(default_factory=list)   # figures of rounds it told

    @property
    def text(self) -> str:
        if self.problems:
            return "; ".join(self.problems)
        if self.unknowable or self.figures_unknowable:
            return "cannot know: " + "; ".join(self.unknowable + self.figures_unknowable)
        return "agree"

    def finish(self) -> "Cell":
        self.verdict = ("disagree" if self.problems else
                        "cannot know" if self.unknowable or self.figures_unknowable else "agree")
        return self


def ms(ts: str | None) -> int | None:
    if ts is None:
        return None
    return int(_dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)


def _ended(e: dict) -> int:
    return ms(e.get("ended")) or ms(e["ts"])


def name(r: Round) -> str:
    return f"{'gen' if r.kind == 'classic' else 'epoch'} {r.key}"


# ---- what a watch can see -------------------------------------------------------------------

def describe_blind(rounds: list[Round], i: int, interval_ms: float, reads_generation: bool,
                   visible_change: bool = True, settled: dict[int, int] | None = None) -> str | None:
    """Why a describe watch polling every `interval_ms` cannot see round i, or None. A round
    is seen when the group stayed in it for a look (it lived `interval_ms` before the next
    round began), and, for an eager group (no generation in describe), when the group
    looked different before and after (other members) or a look fell inside it. A classic
    round lives from its Stabilized line; a consumer group's epoch from the write at which
    its members all reached its target (`settled`: the records'), not from its bump; describe
    shows a classic generation Stable only from its leader's assignment (a slow leader, a
    JVM starting, leaves it CompletingRebalance for hundreds of ms after Stabilized)."""
    r = rounds[i]
    nxt = rounds[i + 1] if i + 1 < len(rounds) else None
    if nxt is not None and r.kind == "classic" and r.members and r.synced_ms is None and \
            any(x.synced_ms for x in rounds):   # this broker logs the leader's assignment
        return f"{name(r)} never Stable (no leader's assignment before the next round)"
    if nxt is not None:
        since = (settled or {}).get(r.key) if r.kind != "classic" else r.synced_ms
        # the group left this generation at the next round's first Preparing line, also
        # when a restart dropped that round and a reload began it again (begun_ms)
        lived = (nxt.begun_ms or nxt.start_ms or nxt.end_ms) - (since or r.end_ms)
        if lived < 0:   # its members reached its target after the next bump: never Stable
            if r.kind == "classic":
                return f"{name(r)}: its leader's assignment came {-lived} ms after the next round began (never Stable)"
            return f"{name(r)} reached its target {-lived} ms after the next bump (never Stable)"
        if lived < interval_ms:
            since_what = "" if not since else " settled" if r.kind != "classic" else " Stable"
            return f"{name(r)} lived {lived} ms{since_what} < {interval_ms:g} ms"
    if reads_generation or i == 0:
        return None
    prev = rounds[i - 1]
    if prev.members != r.members or not visible_change:
        return None
    if r.duration_ms is not None and r.duration_ms >= interval_ms:
        return None
    return f"{name(r)} (same members, {r.duration_ms} ms) < {interval_ms:g} ms"


# ---- a cell -----------------------------------------------------------------------------------

def rounds_cell(events: list[dict], truth: LogTruth, *, interval_s: float | None,
                reads_generation: bool, looks: bool = True,
                records: list[RecordRound] | None = None,
                window: tuple[int, int] | None = None, summary: dict | None = None,
                handovers: dict[int, int] | None = None,
                revoked: dict[int, int] | None = None, handovers_from: str = "clients'") -> Cell:
    """The rounds a witness told (its `rebalance` events) against the broker's.

    interval_s: the witness's poll (or heartbeat) interval (None: the records, exact).
    looks: the witness sees the group only at its looks (describe), not every round.
    reads_generation: the witness's rebalances carry the broker's generation/epoch.
    records: Kafka's decoding of the group's records (a records witness cannot tell a
    generation never written there).
    window: (from, to) ms: only the rounds that ended inside count (the probe's stay).
    handovers: {round key: the longest revoke -> assign of one partition in it, ms, from
    the clients' own callbacks, or `handovers_from` another truth: share and streams
    groups' records} (see client_handovers); revoked: {round key: when that revoke was,
    ms} (handover_revokes)."""
    cell = Cell()
    rebalances = [e for e in events if e["event"] == "rebalance"]
    rounds = [r for r in truth.rounds if window is None or window[0] <= r.end_ms <= window[1]]
    interval_ms = (interval_s or 0) * 1000
    blind: dict[int, str] = {}
    written = {r.key for r in records} if records is not None else None
    # a target computed that no member's heartbeat fetched before the next bump
    unreached = {rr.key for rr in records or () if rr.end_ms is None}
    for i, r in enumerate(rounds):
        why = None
        if r.superseded:
            why = f"epoch {r.key} superseded before its target was computed (no member told)"
        elif r.kind != "classic" and r.key in unreached and i + 1 < len(rounds):
            why = (f"epoch {r.key}: no member reached its target before epoch {rounds[i + 1].key}"
                   " (no member was at it)")
        elif written is not None and r.kind == "classic" and r.members and r.key not in written:
            why = f"gen {r.key} never written to the records (superseded before its SyncGroup)"
        elif interval_s is not None and looks:
            settled = {rr.key: rr.end_ms for rr in records or () if rr.end_ms is not None}
            why = describe_blind(rounds, i, interval_ms, reads_generation, settled=settled)
        if why:
            blind[r.key] = why

    matched: dict[int, list[dict]] = {}
    for e in rebalances:
        key = e.get("to_generation")
        if reads_generation and key is not None:
            if not any(r.key == key for r in rounds):
                cell.problems.append(f"phantom gen {key}")
                continue
        else:
            end = _ended(e)
            before = [r for r in rounds if r.end_ms <= end + CLOCK_MS]
            if not before:
                cell.problems.append(f"phantom round at {e.get('ended') or e['ts']}")
                continue
            key = before[-1].key
        matched.setdefault(key, []).append(e)

    told = 0
    for i, r in enumerate(rounds):
        got = matched.get(r.key, [])
        if len(got) > 1:
            cell.problems.append(f"{name(r)} told {len(got)}x")
        if not got:
            if r.key in blind:
                cell.unknowable.append(blind[r.key])
            else:
                cell.problems.append(f"missed {name(r)}")
            continue
        told += 1
        merged = i > 0 and not matched.get(rounds[i - 1].key)
        _durations(cell, got[0], r, interval_ms, records, merged, (handovers or {}).get(r.key))
        if handovers and r.key in handovers and not merged:
            _handover(cell, got[0], r, handovers[r.key], interval_ms, (revoked or {}).get(r.key),
                      handovers_from)
    if rebalances and not cell.problems and told != len(rounds) - len(cell.unknowable):
        cell.problems.append(f"{told} rounds told, broker {len(rounds)}")
    if summary is not None:
        _summary(cell, summary, rebalances)
    return cell.finish()


def _truth_duration(r: Round, records: list[RecordRound] | None) -> int | None:
    if r.kind == "classic":
        return r.duration_ms
    # a consumer group's round: from its epoch bump to every member at its target at that
    # epoch, both as the records hold them
    for rr in records or ():
        if rr.key == r.key and rr.end_ms is not None and rr.start_ms is not None:
            return rr.end_ms - rr.start_ms
    return None


def _durations(cell: Cell, e: dict, r: Round, interval_ms: float,
               records: list[RecordRound] | None, merged: bool, clients_ms: int | None) -> None:
    truth = _truth_duration(r, records)
    # a round a reload began again lasted, for its members, from the first Preparing line
    longest_truth = (r.end_ms - r.begun_ms) if r.begun_ms is not None and truth is not None else truth
    d = e.get("duration_ms")
    if truth is not None and longest_truth is not None and d is not None and not merged:
        slack = interval_ms + BOUND_MS if interval_ms else EXACT_MS + BOUND_MS
        said = truth if longest_truth == truth else f"{truth}-{longest_truth}"
        low, high = e.get("duration_min_ms"), e.get("duration_max_ms")
        if d == 0 and truth >= 100:
            cell.problems.append(f"{name(r)} in 0 ms (broker {said} ms)")
        elif e.get("duration_basis") == "interval" and low is not None and high is not None:
            # a figure stated as an interval holds when the truth lies in it
            if not (low - slack <= longest_truth and truth <= high + slack):
                cell.problems.append(f"{name(r)} {low}-{high} ms (broker {said} ms)")
        elif e.get("duration_is_lower_bound"):
            if d > longest_truth + slack:
                cell.problems.append(f"{name(r)} at least {d} ms (broker {said} ms)")
        elif not truth - slack <= d <= longest_truth + slack:
            cell.problems.append(f"{name(r)} {d} ms (broker {said} ms)")
    longest = e.get("unowned_partitions_max_ms")
    if longest is not None and truth is not None and not merged:
        # a member may hold nothing for longer than the broker's round (it revoked, then the
        # broker restarted): the clients' own longest handover counts too
        bound = max(longest_truth or truth, clients_ms or 0) + 2 * interval_ms + SYNC_MS
        window = _looks_window(e, interval_ms)
        if longest > bound and e.get("unowned_basis") == "upper_bound" and window is not None \
                and longest <= window + SYNC_MS:
            # an upper bound over the looks' own window around the round, wider than the
            # round because no look answered in between (a describe held through a broker
            # restart): the witness could not narrow it
            cell.figures_unknowable.append(
                f"{name(r)} unowned bound {longest} ms spans its looks' window {window} ms "
                f"(broker's round {truth} ms): no look answered in between")
        elif longest > bound:
            cell.problems.append(f"{name(r)} unowned {longest} ms > round bound {bound:.0f} ms")
    if e.get("unowned_basis") is None and e.get("unowned_partition_ms") == 0:
        cell.problems.append(f"{name(r)} unowned 0 ms with no basis")


def _looks_window(e: dict, interval_ms: float) -> int | None:
    """The window the looks around a told round leave open: its duration's upper bound,
    else from the first look that showed it under way to its end, plus the interval before
    that look."""
    if e.get("duration_max_ms") is not None:
        return int(e["duration_max_ms"])
    started, ended = ms(e.get("started")), ms(e.get("ended"))
    if started is None or ended is None or not interval_ms:
        return None
    return int(ended - started + interval_ms)


def _handover(cell: Cell, e: dict, r: Round, clients_ms: int, interval_ms: float,
              revoked_ms: int | None = None, whose: str = "clients'") -> None:
    """The longest unowned partition against the clients' own longest handover: an upper
    bound is never below it, a lower bound never above it, a measured figure within the
    witness's interval (+ BOUND_MS) of it. A describe bound opens at the last look before
    the round (`ended - duration_max_ms`): a member that gave its partitions up before that
    look (librdkafka's eager subscribe() revokes, then rejoins) did so unseen by the
    broker, so by any look: that part of the clients' figure no describe can know."""
    longest, basis = e.get("unowned_partitions_max_ms"), e.get("unowned_basis")
    if longest is None or basis is None:
        return
    slack = interval_ms + BOUND_MS
    looked = (None if e.get("duration_max_ms") is None or revoked_ms is None
              else _ended(e) - e["duration_max_ms"])
    unseen = 0 if looked is None else looked - revoked_ms
    early = (f"{name(r)}: a member revoked {unseen} ms before the last look that showed it "
             "holding them (unseen by the broker)")
    if basis == "upper_bound" and longest + CLOCK_MS < clients_ms:
        if unseen > 0 and longest + CLOCK_MS >= clients_ms - unseen:
            cell.figures_unknowable.append(early)
        else:
            cell.problems.append(f"{name(r)} unowned bound {longest} ms < {whose} {clients_ms} ms")
    elif basis == "lower_bound" and longest > clients_ms + slack:
        cell.problems.append(f"{name(r)} unowned at least {longest} ms > {whose} {clients_ms} ms")
    elif basis == "measured" and abs(longest - clients_ms) > slack:
        # a leaver revokes, commits, then leaves: describe saw it holding them meanwhile
        if unseen > 0 and abs(longest - (clients_ms - unseen)) <= slack:
            cell.figures_unknowable.append(early)
        else:
            cell.problems.append(f"{name(r)} unowned {longest} ms, {whose} {clients_ms} ms")


def client_handovers(gaps: list[tuple[float, float, tuple]], truth: LogTruth,
                     records: list[RecordRound]) -> dict[int, int]:
    """{round key: longest gap (ms)}: each callback gap (truth_ground.callback_gaps) goes to
    the round in whose window its assign falls (a classic round: Preparing to Stabilized +
    SYNC_MS; a consumer round: its bump to all at target + SYNC_MS)."""
    return {k: ms_ for k, (ms_, _) in _longest_gaps(gaps, truth, records).items()}


def handover_revokes(gaps: list[tuple[float, float, tuple]], truth: LogTruth,
                     records: list[RecordRound]) -> dict[int, int]:
    """{round key: when the longest gap of client_handovers began (its revoke), ms}."""
    return {k: at for k, (_, at) in _longest_gaps(gaps, truth, records).items()}


def _longest_gaps(gaps, truth: LogTruth, records: list[RecordRound]) -> dict[int, tuple[int, int]]:
    """{round key: (the longest gap, its revoke)}. A gap is one round's: of the rounds whose
    window holds its assign, the latest begun (a cooperative handover's revoking
    generation's window, + SYNC_MS, may reach into the round that gives it out)."""
    ends = {rr.key: rr.end_ms for rr in records}
    windows = []
    for r in truth.rounds:
        end = (r.end_ms if r.kind == "classic" else ends.get(r.key)) or None
        if r.start_ms is not None and end is not None:
            windows.append((r.start_ms, r.key, end))
    out: dict[int, tuple[int, int]] = {}
    for a, b, _ in gaps:
        holding = [(start, key) for start, key, end in windows if start <= b * 1000 <= end + SYNC_MS]
        if not holding:
            continue
        key = max(holding)[1]
        took = round((b - a) * 1000)
        if key not in out or took > out[key][0]:
            out[key] = (took, round(a * 1000))
    return out


def _summary(cell: Cell, summary: dict, rebalances: list[dict]) -> None:
    if summary.get("rebalances") != len(rebalances):
        cell.problems.append(f"summary {summary.get('rebalances')} rebalances, told {len(rebalances)}")
    # the total is over the known durations, the unknown ones counted apart (untimed),
    # never as 0; null when none is known
    unknown = [e for e in rebalances if e.get("duration_ms") is None]
    known = [e["duration_ms"] for e in rebalances if e.get("duration_ms") is not None]
    total = summary.get("rebalancing_ms_total")
    if total is not None and (not known or summary.get("rebalances_untimed") != len(unknown)):
        cell.problems.append(f"summary {total} ms rebalancing with {len(unknown)} unknown durations"
                             f" ({summary.get('rebalances_untimed')} said untimed)")
    elif total is not None and total != sum(known):
        cell.problems.append(f"summary {total} ms rebalancing, the known durations {sum(known)} ms")


def metrics_cell(metrics: dict | None, describe: list[dict], rounds: int, seen: Cell) -> Cell:
    """The /metrics of the watch that told `describe` (its cell: `seen`): the rebalances
    counter equals the broker's rounds that watch could see, the duration histogram counts
    only known durations (an unknown one is no 0 s), the unowned counter is the events'
    sum."""
    cell = Cell(unknowable=list(seen.unknowable))
    rebalances = [e for e in describe if e["event"] == "rebalance"]
    if not metrics:
        cell.problems.append("no series")
        return cell.finish()
    counted = metrics.get("groupctl_group_rebalances_total")
    want = rounds - len(seen.unknowable)
    if counted is None or int(counted) != want:
        cell.problems.append(f"rebalances_total {counted and int(counted)}, broker {want} seeable")
    known = [e["duration_ms"] for e in rebalances if e.get("duration_ms") is not None]
    hist = metrics.get("groupctl_group_rebalance_duration_seconds_count")
    if hist is not None and int(hist) != len(known):
        cell.problems.append(f"duration histogram counts {int(hist)}, {len(known)} known")
    unowned = sum(e.get("unowned_partition_ms") or 0 for e in rebalances) / 1000
    got = metrics.get("groupctl_group_unowned_partition_seconds_total") or 0.0
    if abs(got - unowned) > 0.01:
        cell.problems.append(f"unowned {got:.3f} s vs events {unowned:.3f} s")
    return cell.finish()
