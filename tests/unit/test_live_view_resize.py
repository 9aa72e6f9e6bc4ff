"""The live view on a terminal that changes size (tmux resize-window 160 -> 80 -> 160): the
screen is cleared before the first frame at the new size (rich alone rewrites only the
lines it counted, and the terminal reflowed the old frame: pieces of it stayed above the
view); at 80 columns a rebalance is one row (its reason cut at a word) and member ids are
shortened in the middle, their unique ends kept."""
from __future__ import annotations

import io

from rich.console import Console

from groupctl.cli.env import Env
from groupctl.events import envelope, iso_ts
from groupctl.render.watch import WatchModel, _LiveSink, render_model

CLEAR = "\x1b[2J"
MEMBERS = ["consumer-1-a7904720-e428-4566-8727-ed76e13ba78c",
           "consumer-2-54861ccc-49b5-461b-9aee-358984680b77"]
REASON = "; ".join(f"member {m} (client c, host /127.0.0.1) joined" for m in MEMBERS)


def ev(body: dict, at: float = 0.0) -> dict:
    return envelope(body, group="orders", cluster=None, source="describe", at=at)


def events() -> list[dict]:
    out = [ev({"event": "state", "previous": None, "state": "Stable"})]
    for i, m in enumerate(MEMBERS):
        out += [ev({"event": "member_joined", "member_id": m, "client_id": "c",
                    "host": "/127.0.0.1"}),
                ev({"event": "assignment", "member_id": m, "generation": 2,
                    "assigned": [{"topic": "t", "partitions": [i]}],
                    "added": [{"topic": "t", "partitions": [i]}], "revoked": []})]
    out.append(ev({"event": "rebalance", "from_generation": 1, "to_generation": 2,
                   "started": iso_ts(0), "ended": iso_ts(1), "duration_ms": 1000,
                   "members_before": [], "members_after": MEMBERS, "moved_partitions": 2,
                   "reason": REASON}, at=1.0))
    return out


def test_a_resize_clears_the_screen_before_the_next_frame():
    out = io.StringIO()
    env = Env(stdout=out, stderr=io.StringIO(), stdout_is_terminal=True)
    sink = _LiveSink(env, view="full")
    sink.console.size = (160, 50)
    with sink:
        for e in events():
            sink(e)
        sink.draw()
        sink.draw(force=True)
        assert CLEAR not in out.getvalue()   # the same size: drawn over, nothing cleared
        for size in ((80, 50), (160, 50)):
            sink.console.size = size
            at = len(out.getvalue())
            sink.draw()
            drawn = out.getvalue()[at:]
            assert drawn.count(CLEAR) == 1 and drawn.index(CLEAR) < drawn.index("orders")


def test_at_80_columns_a_rebalance_is_one_row_and_ids_keep_their_ends():
    model = WatchModel()
    for e in events():
        model.apply(e)
    console = Console(width=80, record=True, color_system=None)
    console.print(render_model(model, 2.0, width=80))
    text = console.export_text()
    rows = [line for line in text.splitlines() if line.startswith("│ 1 ")]
    assert len(rows) == 1, text
    assert rows[0].rstrip().endswith("│") and "…" in rows[0]
    next_line = text.splitlines()[text.splitlines().index(rows[0]) + 1]
    assert next_line.startswith("└"), text   # the reason did not wrap onto more rows
    for m in MEMBERS:
        assert f"{m[:12]}…{m[-12:]}" in text
    wide = Console(width=200, record=True, color_system=None)
    wide.print(render_model(model, 2.0, width=200))
    wide_text = wide.export_text()
    assert all(m in wide_text for m in MEMBERS)
