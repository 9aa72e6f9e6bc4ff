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
