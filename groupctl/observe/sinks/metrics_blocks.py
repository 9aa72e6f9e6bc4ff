"""Where each group's kept lines sit in the exposition (Blocks), and one scrape's text in
keyed pieces (Scrape), so that a scrape at 100,000 groups joins kept bytes instead of
building or compressing them.

The text format wants a family's samples together, so the text is, per family, its header
then its lines of every group. Groups are held in blocks of up to BLOCK groups; a block
keeps its lines of each family joined and compressed (metrics_gzip.Packed: a scrape's
gzip joins them; its plain text inflates them), built when one of its groups changed. A
group whose lines were built again leaves its block and joins the last one, so a group
that changes often sits with others that do, and the blocks of quiet groups keep their
bytes from scrape to scrape. The order of groups within a family means nothing to
Prometheus.

    blocks = Blocks()
    blocks.place("orders", kept, n)       # new or built again: into the last block
    blocks.drop("gone")                   # no longer followed
    pieces = blocks.settle(len(families)) # each block's Packed, built where it changed
"""
from __future__ import annotations

import itertools
from array import array
from itertools import accumulate
from dataclasses import dataclass
from typing import Callable, Iterator

from .metrics_groups import GroupFamily, _Kept
from .metrics_gzip import Packed, pack, unpack

BLOCK = 64   # groups per block: a piece of a family's lines, compressed once, then kept
RUN = 32     # a family's blocks checksummed together (metrics_server: one CRC per run)

# (run, key, its bytes or their Packed when asked): pieces with the same non-None run, one after the
# other, are checksummed together while their keys stay the same; a key names the same
# bytes at every scrape; the last piece has no key.
Piece = tuple[object, object, Callable[[], "bytes | Packed"]]


class _Block:
    """Up to BLOCK groups' lines: per family, their bytes joined and kept compressed only
    (metrics_gzip.Packed), and where each group's begin. A group's own bytes are dropped
    once joined, and the block's text too: at 100,000 groups it is hundreds of megabytes,
    its deflate a few percent of that; the plain text of a scrape, or of a block built
    again, is inflated from it."""
    __slots__ = ("members", "serial", "data", "at", "bounds", "dirty")

    def __init__(self) -> None:
        self.members: dict[str, _Kept] = {}
        self.serial = 0                        # names this block's bytes while they last
        self.data: tuple[Packed, ...] = ()     # per family, as last built
        self.dirty = True                      # a group came or went since
        self.at: dict[str, int] = {}           # a group's place at the last build
        self.bounds: tuple[array, ...] = ()    # per family: where each place begins

    def build(self, families: int, serial: int) -> None:
        texts = self.texts() if any(k.data is None for k in self.members.values()) else ()
        parts: list[list[bytes]] = [[] for _ in range(families)]
        for name, kept in self.members.items():
            own = kept.data if kept.data is not None else self.own(name, texts)
            for i in range(families):
                parts[i].append(own[i])
        self.data = tuple(pack(b"".join(p) for p in parts))
        self.bounds = tuple(_bounds(p) for p in parts)
        self.at = {name: j for j, name in enumerate(self.members)}
        for kept in self.members.values():
            kept.data = None
        self.serial, self.dirty = serial, False

    def texts(self) -> tuple[bytes, ...]:
        """Per family, the lines as joined at the last build."""
        return tuple(unpack(p) for p in self.data)

    def own(self, name: str, texts: tuple[bytes, ...]) -> tuple[bytes, ...]:
        """A group's lines as joined at the last build, cut from the block's (`texts`)."""
        j = self.at[name]
        return tuple(data[b[j]:b[j + 1]] for data, b in zip(texts, self.bounds))


def _bounds(parts: list[bytes]) -> array:
    return array("I", accumulate(map(len, parts), initial=0))


class Blocks:
    def __init__(self, size: int = BLOCK):
        self.size = size
        self.blocks: list[_Block] = []
        self.where: dict[str, _Block] = {}
        self._serials = itertools.count(1)

    def place(self, name: str, kept: _Kept, families: int) -> None:
        """A group's lines, new or built again: out of its block, into the last one (a
        full last block is joined first: a fleet's lines are never all held twice)."""
        self.drop(name)
        last = self.blocks[-1] if self.blocks else None
        if last is None or len(last.members) >= self.size:
            if last is not None and last.dirty:
                last.build(families, next(self._serials))
            last = _Block()
            self.blocks.append(last)
        last.members[name] = kept
        last.dirty = True
        self.where[name] = last

    def drop(self, name: str) -> None:
        block = self.where.pop(name, None)
        if block is not None:
            del block.members[name]
            block.dirty = True

    def clear(self) -> None:
        self.blocks, self.where = [], {}

    def settle(self, families: int) -> list[tuple[int, tuple[Packed, ...]]]:
        """(serial, lines per family) of every block, in order: empty blocks gone, blocks
        that changed joined again, and when groups have left so many blocks that there are
        twice as many as needed, neighbours merged."""
        blocks = [b for b in self.blocks if b.members]
        if len(blocks) > 2 * (len(self.where) // self.size + 1):
            blocks = self._merged(blocks)
        self.blocks = blocks
        built: list[tuple[int, tuple[Packed, ...]]] = []
        for b in blocks:
            if b.dirty:
                b.build(families, next(self._serials))
            built.append((b.serial, b.data))
        return built

    def _merged(self, blocks: list[_Block]) -> list[_Block]:
        out: list[_Block] = []
        for b in blocks:
            last = out[-1] if out else None
            if last is not None and len(last.members) + len(b.members) <= self.size:
                texts = b.texts() if any(k.data is None for k in b.members.values()) else ()
                for name, kept in b.members.items():
                    if kept.data is None:
                        kept.data = b.own(name, texts)
                    last.members[name] = kept
                    self.where[name] = last
                last.dirty = True
            else:
                out.append(b)
        return out

    def rows(self) -> list[_Kept]:
        return [k for b in self.blocks for k in b.members.values()]


@dataclass
class Scrape:
    """One scrape: the blocks' lines as they stood (serial, lines per family), the
    families, then the tail (groupctl's own metrics and the registry's)."""
    blocks: list[tuple[int, tuple[Packed, ...]]]
    tail: bytes
    families: list[GroupFamily]
    rows: list[_Kept]

    def pieces(self) -> Iterator[Piece]:
        """The text in order (see Piece): a family's header; its lines of each block,
        RUN blocks to a run; the tail."""
        for i, g in enumerate(self.families):
            yield None, ("header", g.family.name), g.family.header().encode
            for n, (serial, data) in enumerate(self.blocks):
                yield (i, n // RUN), (i, serial), _bytes(data[i])
        yield None, None, lambda: self.tail

    def text(self) -> bytes:
        parts: list[bytes] = []
        for i, g in enumerate(self.families):
            parts.append(g.family.header().encode())
            parts += [unpack(data[i]) for _, data in self.blocks]
        parts.append(self.tail)
        return b"".join(parts)


def _bytes(data: Packed) -> Callable[[], Packed]:
    return lambda: data
