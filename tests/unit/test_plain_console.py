"""The plain console of a table view into a pipe or a file (render/plain.py) writes the
bytes rich's console writes there, for every group type and for names that are hostile,
wide or long; rich is drawn on only where the plain console cannot say (and then the
output is rich's own)."""
from __future__ import annotations

import io

import pytest

from groupctl.cli.env import Env, Settings
from groupctl.observe.reads import model, share, streams
from groupctl.render.canary import canary_table
from groupctl.render.groups import describe_tables, list_table
from groupctl.render.plain import PlainConsole
from groupctl.render.visible import visible_data

from test_group_types_model import OFFSETS_ENTRY, SHARE_RAW, STREAMS_RAW, _consumer_group

HOSTILE = "g\x1b]0;pwned\x07[bold]x[/]\u202e:smile:\tend"


def _classic(group="orders", member_id="consumer-1-" + "a" * 36, client="app", topic="t",
             state="Stable", protocol_type="consumer", partitions=(0, 1, 2), **member):
    g = model.GroupDescription(group=group, type="classic", state=state,
                               protocol_type=protocol_type, protocol="range", generation=3,
                               coordinator={"id": 2, "host": "b2", "port": 9092},
                               coordinator_partition=17)
    m = model.Member(member_id, client_id=client, host="/10.0.0.1",
                     subscription={"version": 3, "topics": [topic], "owned_partitions": [],
                                   "generation": 2, "rack": None, "user_data": None},
                     assignment=[model.TopicPartitions(topic, list(partitions))], **member)
    g.members = [m]
    g.offsets = [model.OffsetRow(topic, p, 5 + p, 90, member_id) for p in partitions] + [
        model.OffsetRow(topic, 99, None, 4, None)]
    return g.to_dict()


def _share():
    g = share.share_group(SHARE_RAW)
    g.share_offsets = share.share_offset_rows(OFFSETS_ENTRY, g.members)
    return g.to_dict()


def _consumer_reconciling():
    g = model.GroupDescription(group="k", type="consumer", state="Reconciling",
                               protocol_type="consumer", protocol="uniform", group_epoch=6,
                               assignment_epoch=6)
    tps = model.TopicPartitions
    g.members = [model.Member("A", client_id="a", member_epoch=5, assignment=[tps("t", [0, 1, 2])],
                              target_assignment=[tps("t", [0, 1])])]
    return g.to_dict()


GROUPS = {
    "classic": [_classic()],
    "several": [_classic(), _classic(group="other", state="Empty")],
    "rebalancing": [_classic(state="PreparingRebalance")],
    "raw protocol": [_classic(protocol_type="connect", raw_metadata=b"\x00\x01hi" * 40,
                              raw_assignment=b"\xff")],
    "hostile names": [_classic(group=HOSTILE, member_id=HOSTILE * 3, client=HOSTILE)],
    "markup-like": [_classic(group="[/x] [bold]b", client="[red]c[/red]")],
    "consumer": [_consumer_reconciling()],
    "mixed": [_consumer_group(0, 1).to_dict()],
    "share": [_share()],
    "streams": [streams.streams_group(STREAMS_RAW).to_dict()],
    "empty": [],
}
# what rich measures or lays out its own way: the plain console leaves it to rich
RICH_ONLY = {
    "wide characters": [_classic(client="消費者-一", topic="注文")],
    "combining mark": [_classic(client="cafe\u0301")],
    "longer than the width": [_classic(partitions=range(0, 800, 2))],
}


def _env(out: io.StringIO) -> Env:
    return Env(stdout=out, stderr=io.StringIO(), settings=Settings(output="table"))


def _both(draw, data, wide: bool) -> tuple[str, str, PlainConsole]:
    plain_out, rich_out = io.StringIO(), io.StringIO()
    plain = _env(plain_out).view_console()
    assert isinstance(plain, PlainConsole)
    draw(plain, visible_data(data), wide)
    draw(_env(rich_out).console(), visible_data(data), wide)
    return plain_out.getvalue(), rich_out.getvalue(), plain


def _describe(console, data, wide):
    if not data:
        console.print("no groups")
        return
    describe_tables(console, data, wide)


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("name", list(GROUPS))
def test_describe_writes_richs_bytes_without_rich(name, wide):
    plain, rich, console = _both(_describe, GROUPS[name], wide)
    assert plain == rich
    assert console._rich is None, "drew on rich for what it writes itself"


@pytest.mark.parametrize("name", list(RICH_ONLY))
def test_what_rich_lays_out_its_own_way_goes_to_rich(name):
    plain, rich, console = _both(_describe, RICH_ONLY[name], True)
    assert plain == rich
    assert console._rich is not None


def test_list_and_a_view_with_richs_own_text_in_a_cell():
    groups = [{"group": n, "state": s, "type": "classic", "protocol_type": "consumer",
               "coordinator_id": 3} for n, s in (("a", "Stable"), (HOSTILE, None))]
    for wide in (False, True):
        plain, rich, _ = _both(list_table, groups, wide)
        assert plain == rich
    rows = [{"coordinator": 1, "protocol": "classic", "group": "c", "ok": False,
             "error": "TIMEOUT", "failed_step": "join", "join_ms": 1.5}]
    plain, rich, console = _both(canary_table, rows, False)   # a rich Text cell
    assert plain == rich and console._rich is not None


@pytest.mark.parametrize("total", [999, 1000, 1001])
def test_a_row_as_wide_as_the_console_and_one_wider(total):
    from groupctl.render.cells import table

    def draw(console, _data, _wide):
        console.width = 1000
        grid = table("A", "B", right=("B",))
        grid.add_row("x" * (total - 2 - 5), "y" * 5)
        grid.add_row("z", "1")
        console.print(grid)

    plain, rich, console = _both(draw, None, False)
    assert plain == rich
    assert (console._rich is None) == (total <= 1000)
