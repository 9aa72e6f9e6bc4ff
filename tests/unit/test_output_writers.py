"""The fast JSON writers of render/output.py write exactly what json.dumps(to_plain(...))
writes (describe --all streams them; every -o json/ndjson command uses them)."""
from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from enum import Enum

import pytest

from groupctl.observe.model import GroupState, Member, OffsetRow
from groupctl.render.output import dumps_json, to_plain, write_json_items


class Colour(Enum):
    RED = 1


@dataclass
class HasToDict:
    x: object

    def to_dict(self):
        return {"x": self.x, "raw": b"\x00\xff"}


SCALARS = ["", "plain", "ünï\u2603 \"q\" \\ \n\t\x01", 0, -1, 2**70, 1.5, -0.0, 1e300,
           float("nan"), float("inf"), float("-inf"), True, False, None, GroupState.STABLE,
           Colour.RED, b"\x01\xab", bytearray(b"\x02"), HasToDict(3)]


def random_value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice(SCALARS)
    if roll < 0.65:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if roll < 0.7:
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    keys = ["a", "member_id", "ü", GroupState.EMPTY, 7, ("t", 1), Colour.RED]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def reference(value, indent):
    return json.dumps(to_plain(value), indent=indent, ensure_ascii=False)


@pytest.mark.parametrize("seed", range(300))
def test_writers_equal_json_dumps_of_to_plain(seed):
    rng = random.Random(seed)
    value = random_value(rng)
    assert dumps_json(value) == reference(value, 2)
    assert dumps_json(value, indent=None) == reference(value, None)
    items = [random_value(rng) for _ in range(rng.randrange(4))]
    buf = io.StringIO()
    write_json_items(buf, items)
    assert buf.getvalue() == reference(items, 2) + "\n"
    buf = io.StringIO()
    write_json_items(buf, iter(items), indent=None)
    assert buf.getvalue() == "".join(reference(i, None) + "\n" for i in items)


def test_describe_rows_and_members_as_before():
    rows = [OffsetRow("t", p, 10 + p, 20, None).to_dict() for p in range(3)]
    member = Member("m", client_id="c", subscription={"topics": ["t"]}).to_dict()
    data = [{"group": "g", "state": GroupState.STABLE, "offsets": rows, "members": [member]}]
    assert dumps_json(data) == reference(data, 2)


def test_not_serializable_raises_type_error_as_json_does():
    for indent in (2, None):
        with pytest.raises(TypeError):
            dumps_json({"x": object()}, indent=indent)


def test_offset_rows_of_every_kind_as_json_writes_them():
    rows = [OffsetRow("t\u00fc\"", p, c, e, m).to_dict()
            for p, (c, e, m) in enumerate([(1, 5, None), (None, 5, "m"), (3, None, None),
                                           (None, None, "ü")])]
    odd = [dict(rows[0], partition=True), dict(rows[0], lag=1.5), dict(rows[0], topic=None),
           {**{k: rows[0][k] for k in reversed(list(rows[0]))}}]
    for data in ([{"offsets": rows}], rows, [rows], [{"offsets": rows + [o]} for o in odd]):
        assert dumps_json(data) == reference(data, 2)
