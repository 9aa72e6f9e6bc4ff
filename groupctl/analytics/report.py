"""report.html: one self-contained page (plotly's JS inlined, no network) with
- a timeline: one trace per group, one bar per rebalance from start to end, coloured by
  reason, hover text with generations/epochs, trigger member, duration, members, moved
  partitions and unowned time, each figure with the witness it came from;
- a histogram of rebalance durations;
- the storms table, the coordinator moves and the per-group metrics.
Built from the collected rows (load.rows), not from Spark.
"""
from __future__ import annotations

import html
from pathlib import Path

REASON_COLOURS = {
    "join": "#4c78a8", "leave": "#f58518", "session timeout": "#e45756",
    "static member": "#72b7b2", "metadata": "#54a24b", "sync timeout": "#eeca3b",
    "fenced": "#b279a2", "other": "#9d755d", "unknown": "#bab0ac",
}


def timeline_figure(episodes: list[dict]) -> dict:
    """The timeline as plotly's figure JSON: one bar trace per group. Built as plain data
    (rendered with validation off): plotly's graph objects validated and copied every one
    of 100,000 bars one by one (12 s of a 1,000-group report)."""
    timed: dict[str, list[dict]] = {e["group"]: [] for e in episodes}
    for e in episodes:
        if e["started"] and e["ended"]:
            timed[e["group"]].append(e)
    groups = sorted(timed)
    # a bar at least 1/300 of the chart wide, so a 5 ms rebalance still shows (the hover
    # text has the real duration)
    least = _span_ms([e for eps in timed.values() for e in eps]) / 300
    data: list[dict] = [{
        "type": "bar", "name": group, "orientation": "h", "y": [group] * len(eps),
        "base": [e["started"] for e in eps],
        "x": [max(e["duration_ms"] or 0, least, 1) for e in eps],
        "marker": {"color": [REASON_COLOURS.get(e["reason_kind"], "#9d755d") for e in eps]},
        "hovertext": [_hover(e) for e in eps], "hoverinfo": "text", "showlegend": False,
    } for group, eps in ((g, timed[g]) for g in groups)]
    kinds = {e["reason_kind"] for eps in timed.values() for e in eps}
    data += [{"type": "scatter", "x": [None], "y": [None], "mode": "markers", "name": kind,
              "marker": {"color": colour, "symbol": "square", "size": 12},
              "showlegend": True, "hoverinfo": "skip"}   # the colour key: legend only
             for kind, colour in REASON_COLOURS.items() if kind in kinds]
    return {"data": data, "layout": {
        "template": _template(), "title": {"text": "Rebalances by group (colour: reason)"},
        "barmode": "overlay", "xaxis": {"type": "date", "title": {"text": "time (UTC)"}},
        "yaxis": {"automargin": True},
        "height": max(300, 60 * len(groups) + 150), "legend": {"title": {"text": "reason"}}}}


def _template() -> dict:
    """plotly's default look, as graph objects would have set it."""
    import plotly.io as pio

    return pio.templates[pio.templates.default].to_plotly_json()


def _span_ms(episodes: list[dict]) -> float:
    from datetime import datetime

    if not episodes:
        return 0.0
    parse = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))  # noqa: E731
    start = min(parse(e["started"]) for e in episodes)
    end = max(parse(e["ended"]) for e in episodes)
    return (end - start).total_seconds() * 1000


def _hover(e: dict) -> str:
    """A round's figures, each with the witness it came from (the `*_source` columns) in
    brackets, a bound as a bound, and `-` for what no witness knew."""
    span = f"{_dash(e['from_generation'])} → {_dash(e['to_generation'])}"
    return "<br>".join(html.escape(str(x)) for x in (
        f"{e['group']} ({e['group_type']}) {span}", f"{e['started']} .. {e['ended']}",
        f"{duration_text(e)}, {e['reason_kind']}",
        f"trigger: {_dash(e['trigger_member'])}",
        f"reason: {(e['reason'] or '-')[:160]}{_from(e, 'reason')}",
        _members(e), *_cost(e)))


def _dash(value, unit: str = "") -> str:
    return "-" if value is None else f"{value}{unit}"


def _members(e: dict) -> str:
    """Members before → after and the partitions moved, one witness named once."""
    before, after = e.get("members_before_source"), e.get("members_after_source")
    members = f"members {_dash(e.get('members_before'))} → {_dash(e.get('members_after'))}" + (
        _from(e, "members_after") if before == after or before is None else
        f" ({before} → {after or '-'})")
    return (f"{members}, moved partitions {_dash(e.get('moved_partitions'))}"
            f"{_from(e, 'moved_partitions')}")


def _from(e: dict, field: str) -> str:
    """` (witness)` of a figure, from its `<field>_source` column; nothing when unnamed."""
    source = e.get(f"{field}_source")
    return f" ({source})" if source else ""


def duration_text(e: dict) -> str:
    """A round's duration as its witnesses together prove it (duration_min_ms ..
    duration_max_ms): one figure (`412 ms (broker-log)`), an interval (`300-800 ms
    (records)`), a bound (`≥ 120 ms (coordinator-records)`), each end's witness named (`≥`
    the lower end's, `≤` the upper end's, when two); two witnesses that contradict each
    other both shown, neither picked; `-` when no witness knew it."""
    low, high = e.get("duration_min_ms"), e.get("duration_max_ms")
    by_low, by_high = e.get("duration_min_source"), e.get("duration_max_source")
    if low is None and high is None:   # a figure that bounds nothing (the clients' span)
        return f"{_dash(e.get('duration_ms'), ' ms')}{_from(e, 'duration')}"
    if low is not None and high is not None and low > high:
        return (f"duration: the witnesses disagree, ≥ {low} ms ({by_low}) but ≤ {high} ms "
                f"({by_high})")
    if high is None:
        return f"≥ {low} ms ({by_low})"
    if low is None:
        return f"≤ {high} ms ({by_high})"
    figure = f"{low} ms" if low == high else f"{low}-{high} ms"
    return f"{figure} ({by_low})" if by_low == by_high else \
        f"{figure} ({by_low} ≥, {by_high} ≤)"


def unowned_text(e: dict) -> str:
    """A round's unowned time as its witnesses together prove it (unowned_min_ms ..
    unowned_max_ms, each end's witness: `≥` a lower end's, `≤` an upper end's), the longest
    partition's from the best figure; two witnesses that contradict each other are both
    shown, neither picked."""
    low, high = e.get("unowned_min_ms"), e.get("unowned_max_ms")
    by_low, by_high = e.get("unowned_min_source"), e.get("unowned_max_source")
    if low is None and high is None:
        if e.get("unowned_partition_ms") is None:
            return "unowned -"
        # a figure of no known basis bounds nothing: shown as told
        return (f"unowned {e['unowned_partition_ms']} ms ({e.get('unowned_basis') or 'basis -'})"
                f"{_from(e, 'unowned')}")
    if low is not None and high is not None and low > high:
        text = (f"unowned: the witnesses disagree, ≥ {low} ms ({by_low}) but ≤ {high} ms "
                f"({by_high})")
    elif low == high:
        text = (f"unowned {low} ms measured ({by_low})" if by_low == by_high else
                f"unowned {low} ms ({by_low} ≥, {by_high} ≤)")
    elif high is None:
        text = f"unowned ≥ {low} ms ({by_low} ≥)"
    elif low is None:
        text = f"unowned ≤ {high} ms ({by_high} ≤)"
    else:
        text = f"unowned {low}-{high} ms ({by_low} ≥, {by_high} ≤)"
    longest = e.get("unowned_partitions_max_ms")
    return text + ("" if longest is None else
                   f", longest partition {longest} ms ({e.get('unowned_basis')}"
                   f"{', ' + e['unowned_source'] if e.get('unowned_source') else ''})")


def _cost(e: dict) -> list[str]:
    """Issue 19: what the rebalance cost and who held it up, each figure with its witness,
    and the clients' own figure when their logs were given."""
    out = [unowned_text(e)]
    if e.get("client_unowned_partition_ms") is not None:
        out.append(f"clients' own figure: partitions unowned {e['client_unowned_partition_ms']}"
                   f" ms in all over {e.get('client_unowned_partitions')} handover(s) "
                   f"({e.get('client_unowned_basis')}), longest "
                   f"{e.get('client_unowned_partitions_max_ms')} ms"
                   + (f", {e['client_unassigned_partitions']} never taken up again"
                      if e.get("client_unassigned_partitions") else ""))
    if e.get("slowest_member") is not None:
        out.append(f"slowest member {e['slowest_member']}: {_dash(e.get('slowest_member_ms'), ' ms')}"
                   f"{_from(e, 'slowest_member')}")
    return out


def duration_figure(episodes: list[dict]) -> dict:
    # every round the broker counts, the one that emptied the group too (transforms.ROUND_OUTCOMES)
    done = [e["duration_ms"] for e in episodes if e["outcome"] in ("stable", "empty")]
    known = [ms for ms in done if ms is not None]   # an unknown duration is no 0
    title = "Rebalance durations (ms)" + (
        f" of {len(known)} of {len(done)} rebalances ({len(done) - len(known)} of unknown "
        "duration)" if len(known) < len(done) else "")
    return {"data": [{"type": "histogram", "x": known, "nbinsx": 40, "name": "rebalances"}],
            "layout": {"template": _template(), "title": {"text": title},
                       "xaxis": {"title": {"text": "ms"}},
                       "yaxis": {"title": {"text": "rebalances"}}, "height": 320}}


def _table(rows: list[dict], columns: list[str], empty: str) -> str:
    if not rows:
        return f"<p>{html.escape(empty)}</p>"
    # a column name may break after an underscore: the table fits the page's width
    head = "".join(f"<th>{html.escape(c).replace('_', '_<wbr>')}</th>" for c in columns)
    body = "".join("<tr>" + "".join(
        f"<td>{'' if r[c] is None else html.escape(str(r[c]))}</td>" for c in columns) + "</tr>"
        for r in rows)
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}'
            f'</tbody></table></div>')


def write_report(path: Path, collected: dict[str, list[dict]], title: str) -> Path:
    import plotly.io as pio
    import plotly.offline

    episodes = collected["episodes"]
    timeline = pio.to_html(timeline_figure(episodes), validate=False, full_html=False,
                           include_plotlyjs=False, div_id="timeline")
    durations = pio.to_html(duration_figure(episodes), validate=False, full_html=False,
                            include_plotlyjs=False, div_id="durations")
    metric_cols = ["group", "type", "rebalances", "failed_members", "left_members",
                   "left_or_failed_members", "duration_ms_p50", "duration_ms_p95",
                   "duration_ms_max", "storms", "top_reason", "rebalances_per_hour",
                   "time_rebalancing_ms", "time_rebalancing_min_ms",
                   "time_rebalancing_max_ms", "rebalances_untimed",
                   "unowned_partition_ms_total", "unowned_min_ms_total",
                   "unowned_max_ms_total", "client_unowned_partition_ms_total"]
    storm_cols = ["group", "storm", "started", "ended", "rebalances", "top_reason"]
    move_cols = ["group", "ts", "from_broker", "to_broker", "last_on_old", "members"]
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:1.5em}} table{{border-collapse:collapse;margin:.5em 0 1.5em}}
td,th{{border:1px solid #ccc;padding:.2em .5em;font-size:13px;text-align:left;vertical-align:top}}
td{{max-width:32em;overflow-wrap:anywhere}} .scroll{{max-width:100%;overflow-x:auto}}</style>
<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script></head>
<body><h1>{html.escape(title)}</h1>
<h2>Groups</h2>
{_table(collected["metrics"], metric_cols, "No groups.")}
{timeline}
{durations}
<h2>Storms</h2>
{_table(collected["storms"], storm_cols, "No storms.")}
<h2>Coordinator moves</h2>
{_table(collected.get("moves") or [], move_cols, "No coordinator moves.")}
</body></html>
"""
    path.write_text(page, encoding="utf-8")
    return path
