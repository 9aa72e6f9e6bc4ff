"""report.html's figures are plain plotly figure JSON, rendered without plotly's validation
(12 s of a 1,000-group report went to validating and copying every bar). So the data must
be what plotly's graph objects would accept and give back unchanged: checked here by
validating it with them, over episodes with every kind of hole in them. No Spark."""
from __future__ import annotations

import json
import random

import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from groupctl.analytics import report


def _episodes(seed: int, groups: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for g in range(groups):
        for i in range(rng.randrange(0, 6)):
            out.append({
                "group": f"g<{g}>&", "group_type": "classic", "from_generation": i,
                "to_generation": i + 1, "trigger_member": "m", "outcome":
                rng.choice(["stable", "empty"]),
                "started": None if rng.random() < 0.1 else f"2026-11-24T{i:02d}:00:00.000Z",
                "ended": None if rng.random() < 0.1 else "2026-11-24T23:59:00.000Z",
                "duration_ms": None if rng.random() < 0.2 else rng.randrange(0, 5000),
                "reason_kind": rng.choice([*report.REASON_COLOURS, "a new kind"]),
                "reason": None if rng.random() < 0.3 else "r" * rng.randrange(300)})
    return out


def _json(figure) -> dict:
    return json.loads(json.dumps(figure, cls=PlotlyJSONEncoder))


def test_the_figures_are_what_plotly_validates_them_to():
    for seed, groups in ((1, 40), (2, 1), (3, 0)):
        episodes = _episodes(seed, groups)
        for make in (report.timeline_figure, report.duration_figure):
            figure = make(episodes)
            assert _json(go.Figure(figure).to_plotly_json()) == _json(figure), make


def test_the_timeline_has_one_trace_per_group_with_its_timed_rounds():
    episodes = _episodes(4, 25)
    data = report.timeline_figure(episodes)["data"]
    bars = [t for t in data if t["type"] == "bar"]
    assert [t["name"] for t in bars] == sorted({e["group"] for e in episodes})
    for trace in bars:
        timed = [e for e in episodes if e["group"] == trace["name"]
                 and e["started"] and e["ended"]]
        assert trace["base"] == [e["started"] for e in timed]
    # the colour key: one legend entry per reason kind the timed rounds have
    keys = [t["name"] for t in data if t["type"] == "scatter"]
    kinds = {e["reason_kind"] for e in episodes if e["started"] and e["ended"]}
    assert keys == [k for k in report.REASON_COLOURS if k in kinds]


def _round(gen: int, **fields) -> dict:
    base = dict.fromkeys(("duration_ms", "reason", "trigger_member", "members_before",
                          "members_after", "moved_partitions", "unowned_partition_ms",
                          "unowned_partitions_max_ms", "unowned_basis", "unowned_min_ms",
                          "unowned_max_ms"))
    return {**base, "group": "g", "group_type": "classic", "from_generation": gen - 1,
            "to_generation": gen, "started": f"2026-11-24T10:0{gen}:00.000Z",
            "ended": f"2026-11-24T10:0{gen}:01.000Z", "reason_kind": "join",
            "outcome": "stable", **fields}


def test_a_rounds_hover_names_each_figures_witness_and_shows_bounds_as_bounds():
    rounds = [
        _round(2, duration_ms=600, duration_source="broker-log", reason="Adding new member",
               reason_source="broker-log", trigger_member="m", members_before=1,
               members_before_source="records", members_after=2,
               members_after_source="broker-log", moved_partitions=2,
               moved_partitions_source="records", unowned_partition_ms=120,
               unowned_partitions_max_ms=60, unowned_basis="lower_bound",
               unowned_source="coordinator-records", unowned_min_ms=120, unowned_max_ms=900,
               unowned_min_source="coordinator-records", unowned_max_source="records"),
        _round(3, unowned_partition_ms=1000, unowned_basis="lower_bound",
               unowned_source="coordinator-records", unowned_min_ms=1000, unowned_max_ms=900,
               unowned_min_source="coordinator-records", unowned_max_source="records"),
        _round(4, unowned_partition_ms=800, unowned_basis="upper_bound",
               unowned_source="records", unowned_max_ms=800, unowned_max_source="records"),
        _round(5, unowned_partition_ms=50, unowned_basis="measured", unowned_source="records",
               unowned_min_ms=50, unowned_max_ms=50, unowned_min_source="records",
               unowned_max_source="records"),
        _round(6),   # the broker log alone: no witness of the figures
    ]
    (bar,) = [t for t in report.timeline_figure(rounds)["data"] if t["type"] == "bar"]
    hover = [text.split("<br>") for text in bar["hovertext"]]
    assert "600 ms (broker-log), join" in hover[0]
    assert "members 1 → 2 (records → broker-log), moved partitions 2 (records)" in hover[0]
    assert ("unowned 120-900 ms (coordinator-records ≥, records ≤), longest partition 60 ms "
            "(lower_bound, coordinator-records)") in hover[0]
    # two witnesses that contradict each other: both shown, neither picked
    assert ("unowned: the witnesses disagree, ≥ 1000 ms (coordinator-records) but ≤ 900 ms "
            "(records)") in hover[1]
    assert "unowned ≤ 800 ms (records ≤)" in hover[2]
    assert "unowned 50 ms measured (records)" in hover[3]
    # what no witness knows is "-", never 0
    assert {"-, join", "unowned -", "members - → -, moved partitions -"} <= set(hover[4])


def test_a_rounds_hover_shows_its_duration_as_its_witnesses_prove_it():
    """Exact, an interval, a bound, a contradiction between witnesses, and unknown: each
    as what is proven, with the witness of each end; never the middle as if exact."""
    def timed(gen, low, high, by_low, by_high, ms=None, source=None):
        return _round(gen, duration_ms=ms, duration_source=source, duration_min_ms=low,
                      duration_max_ms=high, duration_min_source=by_low,
                      duration_max_source=by_high)
    rounds = [timed(2, 412, 412, "broker-log", "broker-log", 412, "broker-log"),
              timed(3, 300, 800, "records", "records", 550, "records"),
              timed(4, 120, None, "coordinator-records", None, 120, "coordinator-records"),
              timed(5, 350, 800, "coordinator-records", "records", 350, "coordinator-records"),
              timed(6, 900, 800, "broker-log", "records", 900, "broker-log"),
              timed(7, None, None, None, None)]
    (bar,) = [t for t in report.timeline_figure(rounds)["data"] if t["type"] == "bar"]
    lines = [text.split("<br>")[2] for text in bar["hovertext"]]
    assert lines == [
        "412 ms (broker-log), join", "300-800 ms (records), join",
        "≥ 120 ms (coordinator-records), join",
        "350-800 ms (coordinator-records ≥, records ≤), join",
        "duration: the witnesses disagree, ≥ 900 ms (broker-log) but ≤ 800 ms (records), join",
        "-, join"]
