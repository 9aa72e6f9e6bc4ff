"""The JSON writers of render/output.py write exactly what json.dumps(to_plain(...))
writes (describe --all streams them; every -o json/ndjson command uses them), but for the
one documented difference of the indented form: NaN and Infinity are null, a non-zero
float below 1e-4 is spelled out (orjson's spelling; the same number)."""
from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from enum import Enum

import orjson
import pytest

from groupctl.observe.reads.model import GroupState, Member, OffsetRow
from groupctl.render.output import _plain_default, dumps_json, to_plain, write_json_items


class Colour(Enum):
    RED = 1


@dataclass
class HasToDict:
    x: object

    def to_dict(self):
        return {"x": self.x, "raw": b"\x00\xff"}


SCALARS = ["", "plain", "ünï\u2603 \"q\" \\ \n\t\x01\x1f\x7f\u2028\U0001f600", 0, -1, 2**70, 2**63 - 1,
           -2**63, 1.5, -0.0, 1e300, 1e16, 1e15, 1.7e9 + 0.125, 5e-05, 1e-7, 0.0001,
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


def as_written(value, spelled: list):
    """to_plain(value) with the floats json.dumps spells otherwise as the indented form
    writes them: not a number -> None; below 1e-4 -> a marker string that `indented`
    replaces with orjson's spelling (json.dumps writes a float as float.__repr__ only)."""
    plain = to_plain(value)
    if isinstance(plain, float):
        if plain != plain or plain in (float("inf"), float("-inf")):
            return None
        if plain and abs(plain) < 1e-4:
            spelled.append(orjson.dumps(plain).decode())
            return f"\0float{len(spelled) - 1}"
        return plain
    if isinstance(plain, dict):
        return {k: as_written(v, spelled) for k, v in plain.items()}
    if isinstance(plain, list):
        return [as_written(v, spelled) for v in plain]
    return plain


def indented(value) -> str:
    """What -o json writes of one value: json.dumps' text, with as_written's floats when
    orjson can write it (the rest, an int past 64 bits or a key that is not a str, goes
    json.dumps' own way)."""
    try:
        orjson.dumps(value, default=_plain_default, option=orjson.OPT_PASSTHROUGH_DATACLASS)
    except orjson.JSONEncodeError:
        return reference(value, 2)
    spelled: list[str] = []
    text = json.dumps(as_written(value, spelled), indent=2, ensure_ascii=False)
    for i, number in enumerate(spelled):
        text = text.replace(f'"\\u0000float{i}"', number, 1)
    return text


def array(items) -> str:
    """What write_json_items writes: each item as `indented` writes it, one level in."""
    if not items:
        return "[]\n"
    return "[\n  " + ",\n  ".join(indented(i).replace("\n", "\n  ") for i in items) + "\n]\n"


@pytest.mark.parametrize("seed", range(300))
def test_writers_equal_json_dumps_of_to_plain(seed):
    rng = random.Random(seed)
    value = random_value(rng)
    assert dumps_json(value) == indented(value)
    assert dumps_json(value, indent=None) == reference(value, None)
    items = [random_value(rng) for _ in range(rng.randrange(4))]
    buf = io.StringIO()
    write_json_items(buf, items)
    assert buf.getvalue() == array(items)
    buf = io.StringIO()
    write_json_items(buf, iter(items), indent=None)
    assert buf.getvalue() == "".join(reference(i, None) + "\n" for i in items)


@pytest.mark.parametrize("seed", range(60))
def test_items_written_in_chunks_as_one_at_a_time(seed, monkeypatch):
    """Chunk boundaries, and an item orjson refuses inside a chunk, change no byte."""
    from groupctl.render import output

    monkeypatch.setattr(output, "ITEMS_AT_ONCE", 2)
    rng = random.Random(seed)
    items = [random_value(rng) for _ in range(rng.randrange(8))]
    buf = io.StringIO()
    write_json_items(buf, iter(items))
    assert buf.getvalue() == array(items)


def test_describe_rows_and_members_as_before():
    rows = [OffsetRow("t", p, 10 + p, 20, None).to_dict() for p in range(3)]
    member = Member("m", client_id="c", subscription={"topics": ["t"]}).to_dict()
    data = [{"group": "g", "state": GroupState.STABLE, "offsets": rows, "members": [member]}]
    assert dumps_json(data) == reference(data, 2)    # no float: byte for byte json.dumps'


def test_the_documented_differences_and_what_goes_json_dumps_way():
    assert dumps_json([float("nan"), float("inf"), 5e-05, 1e-07, 1e16, 0.5]) == (
        "[\n  null,\n  null,\n  0.00005,\n  1e-7,\n  1e+16,\n  0.5\n]")
    for odd in ({"n": 2**70}, {7: "int key"}, {"s": "lone \ud800"}, [float("nan"), 2**64]):
        assert dumps_json(odd) == reference(odd, 2)   # orjson cannot: json.dumps writes it


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
        assert dumps_json(data) == indented(data)


# ---- describe -o json straight from GroupDescriptions (render/describe_json.py) ----------

ODD_NUMBERS = [True, 1.5, -1, 2**70]     # types or values describe never puts in a row
ODD_TEXTS = [None, GroupState.EMPTY]


def random_group(rng: random.Random, i: int):
    from groupctl.observe.reads.model import GroupDescription, TopicPartitions
    from groupctl.observe.reads.share import ShareOffsetRow

    def odd(value, choices):  # now and then a value of a type describe never builds
        return rng.choice(choices) if rng.random() < 0.03 else value

    rows = [OffsetRow(odd(rng.choice(["t", "ü\"\\", "z"]), ODD_TEXTS), odd(p, ODD_NUMBERS),
                      odd(rng.choice([None, 3, 10]), ODD_NUMBERS),
                      odd(rng.choice([None, 5, 20]), ODD_NUMBERS),
                      odd(rng.choice([None, "m-1", "ü"]), ODD_TEXTS))
            for p in range(rng.randrange(6))]
    members = [Member(f"m{j}", client_id=rng.choice([None, "c"]),
                      assignment=[TopicPartitions("t", [0, 1])],
                      subscription={"topics": ["t"]}) for j in range(rng.randrange(3))]
    desc = GroupDescription(group=f"g{i}", type=rng.choice(["classic", "consumer", "share"]),
                            state=rng.choice([GroupState.STABLE, "Empty", None]),
                            coordinator={"id": 1, "host": "h", "port": 9092},
                            generation=rng.choice([None, 3]), members=members, offsets=rows)
    if rng.random() < 0.3:
        desc.share_offsets = [ShareOffsetRow("t", 0, 5, 1, rng.choice([None, 4]), ["m0"])]
    if rng.random() < 0.3:
        desc.extra = rng.choice([{"topology": {"epoch": 1}}, {"offsets": [1, 2]}, {}])
    if rng.random() < 0.2:
        desc.error = "boom"
    return desc


@pytest.mark.parametrize("seed", range(200))
def test_describe_json_writes_what_json_dumps_writes(seed):
    rng = random.Random(seed)
    groups = [random_group(rng, i) for i in range(rng.randrange(4))]
    out = io.StringIO()
    write_json_items(out, (g.to_dict() for g in groups))
    assert out.getvalue() == array([g.to_dict() for g in groups])
