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
