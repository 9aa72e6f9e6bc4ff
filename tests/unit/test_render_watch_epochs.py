"""join --watch views of a KIP-848 probe's events: epochs in the plain lines and the live
view's model."""
from __future__ import annotations

from groupctl.events import EpochChanged, EpochProbeAction, envelope
from groupctl.render.watch import WatchModel, plain_line


def ev(event):
    return envelope(event, group="g", cluster="c", at=0)


def test_plain_lines_show_epochs():
    assert plain_line(ev(EpochChanged(7, 6))).endswith("group epoch 7 assignment epoch 6")
    line = plain_line(ev(EpochProbeAction("acknowledged", "m-1", 7)))
    assert "probe acknowledged member=m-1" in line and line.endswith("member_epoch=7")


def test_the_model_follows_epochs_and_the_members_state():
    m = WatchModel()
    for e in (EpochChanged(7, 7), EpochProbeAction("joined", "m-1", 7),
              EpochProbeAction("acknowledged", "m-1", 7)):
        m.apply(ev(e))
    assert (m.group_epoch, m.assignment_epoch, m.member_epoch) == (7, 7, 7)
    assert m.member_state == "STABLE" and m.member_id == "m-1"


def test_the_one_shot_table_of_a_consumer_group_shows_the_epochs():
    import io

    from rich.console import Console

    from groupctl.render.join import join_table

    out = io.StringIO()
    join_table(Console(file=out, width=120), {
        "group": "g", "type": "consumer", "generation": None, "member_epoch": 7,
        "group_epoch": 7, "assignment_epoch": 7, "protocol": "uniform", "member_id": "m-1",
        "instance_id": None, "coordinator": {"id": 1, "host": "h", "port": 9092},
        "assignment": [{"topic": "t", "partitions": [0, 1]}], "joined_in_ms": 12}, False)
    text = out.getvalue()
    for words in ("group epoch", "assignment epoch", "member epoch", "consumer (KIP-848)",
                  "t:0-1", "uniform"):
        assert words in text, text
