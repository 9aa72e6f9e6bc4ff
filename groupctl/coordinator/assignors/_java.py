"""Just enough of Java's semantics to reproduce the Java assignors' orderings.

* ``jkey``: a sort key that orders strings as ``String.compareTo`` does (UTF-16 code
  units, not code points).
* ``string_hash`` / ``tp_hash``: ``String.hashCode`` and ``TopicPartition.hashCode``.
* ``JavaHashSet``: the iteration order of a ``java.util.HashMap``/``HashSet`` (Java 8+
  implementation): entries are visited bucket by bucket, and within a bucket in insertion
  order; the table doubles when the size passes 3/4 of the capacity, or when a bucket of a
  table smaller than 64 grows past 8 entries.  Tree bins (9+ colliding keys in a table of
  64 or more) are not modelled; they do not occur at the sizes consumer groups have, short
  of deliberately colliding hashes.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import lru_cache
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

_MASK = 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value & 0x80000000 else value


@lru_cache(maxsize=65536)
def jkey(text: str) -> bytes:
    """Sort key equal to Java's ``String.compareTo`` order."""
    return text.encode("utf-16-be", "surrogatepass")


@lru_cache(maxsize=65536)
def string_hash(text: str) -> int:
    units = jkey(text)
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK
    return _int32(h)


def tp_hash(tp: tuple[str, int]) -> int:
    topic, partition = tp
    return _int32(31 * (31 + partition) + string_hash(topic))


def _spread(h: int) -> int:
    h &= _MASK
    return h ^ (h >> 16)


def _table_size_for(capacity: int) -> int:
    n = 1
    while n < capacity:
        n <<= 1
    return n


class JavaHashSet(Generic[K]):
    """Keys only; iteration follows ``java.util.HashSet`` for the same operations."""

    def __init__(self, hash_fn: Callable[[K], int], initial_capacity: int | None = None):
        self._hash_fn = hash_fn
        self._seq: dict[K, int] = {}
        self._spread: dict[K, int] = {}
        self._counter = 0
        self._bins: dict[int, int] = {}      # bucket index -> entries, for the current capacity
        self._cap = 0
        self._thr = 0 if initial_capacity is None else _table_size_for(initial_capacity)

    def _resize(self) -> None:
        old_cap, old_thr, new_thr = self._cap, self._thr, 0
        if old_cap > 0:
            new_cap = old_cap << 1
            if old_cap >= 16:
                new_thr = old_thr << 1
        elif old_thr > 0:
            new_cap = old_thr
        else:
            new_cap, new_thr = 16, 12
        if new_thr == 0:
            new_thr = int(new_cap * 0.75)
        self._cap, self._thr = new_cap, new_thr
        self._bins = {}
        for key in self._seq:
            index = self._bucket(key)
            self._bins[index] = self._bins.get(index, 0) + 1

    def _bucket(self, key: K) -> int:
        return self._spread[key] & (self._cap - 1)

    def add(self, key: K) -> bool:
        if key in self._seq:
            return False
        if self._cap == 0:
            self._resize()
        spread = _spread(self._hash_fn(key))
        if self._bins.get(spread & (self._cap - 1), 0) >= 8 and self._cap < 64:
            self._resize()  # HashMap.treeifyBin resizes small tables instead
        self._spread[key] = spread
        self._seq[key] = self._counter
        self._counter += 1
        index = self._bucket(key)
        self._bins[index] = self._bins.get(index, 0) + 1
        if len(self._seq) > self._thr:
            self._resize()
        return True

    def discard(self, key: K) -> None:
        if key in self._seq:
            self._bins[self._bucket(key)] -= 1
            del self._seq[key], self._spread[key]

    def __contains__(self, key: object) -> bool:
        return key in self._seq

    def __len__(self) -> int:
        return len(self._seq)

    def __iter__(self) -> Iterator[K]:
        return iter(sorted(self._seq, key=lambda k: (self._bucket(k), self._seq[k])))

    def first(self) -> K:
        return min(self._seq, key=lambda k: (self._bucket(k), self._seq[k]))


def hash_order(keys: Iterable[str]) -> list[str]:
    """Iteration order of a default ``HashMap<String, ?>`` after putting ``keys`` in order."""
    table: JavaHashSet[str] = JavaHashSet(string_hash)
    for key in keys:
        table.add(key)
    return list(table)
