"""Deflate pieces that join into one gzip stream, and their CRCs combined (metrics_server
serves them; metrics_blocks keeps a block's lines only so: at 100,000 groups with every
group's series the text is 180-360 MB and its deflate 6-18 MB).

    packed = pack([b"a\n", b"b\n"])        # one Packed per text: standalone deflate blocks
    unpack(packed[0]) == b"a\n"
    crc_combine(crc_a, crc_b, crc_shift(len_b)) == zlib.crc32(a + b)
"""
from __future__ import annotations

import zlib
from typing import Iterable

GZIP_LEVEL = 1   # quick: a piece is compressed at every change of one of its groups
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"   # deflate, no name, mtime 0


# CRC-32 of joined pieces from the pieces' own (zlib's crc32_combine, which Python's zlib
# does not offer): crc(A + B) = crc(A) * x^(8 len(B)) mod P, xor crc(B), in the reflected
# bit order of gzip's CRC.
_POLY = 0xEDB88320


def _multmodp(a: int, b: int) -> int:
    """a * b mod P."""
    m, p = 1 << 31, 0
    while True:
        if a & m:
            p ^= b
            if a & (m - 1) == 0:
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def _powers() -> list[int]:
    out, p = [], 1 << 30   # x^1
    for _ in range(32):
        out.append(p)
        p = _multmodp(p, p)
    return out


_X2N = _powers()   # x^(2^k) mod P


_SHIFTS: list[list[int]] = []   # [i][d]: x^(8 d 256^i) mod P, built at the first use


def _shifts() -> list[list[int]]:
    if not _SHIFTS:
        for i in range(4):
            one = _slow_shift(256 ** i)
            row = [1 << 31, one]
            for _ in range(254):
                row.append(_multmodp(row[-1], one))
            _SHIFTS.append(row)
    return _SHIFTS


def _slow_shift(length: int) -> int:
    p, k = 1 << 31, 3
    while length:
        if length & 1:
            p = _multmodp(_X2N[k & 31], p)
        length >>= 1
        k += 1
    return p


def crc_shift(length: int) -> int:
    """x^(8 length) mod P: what crc(A) is multiplied by when `length` bytes follow A (one
    product per byte of `length`: a piece's is taken at every build of its block)."""
    if length >= 1 << 32:
        return _slow_shift(length)
    rows = _SHIFTS or _shifts()
    p = rows[0][length & 255]
    for i in (1, 2, 3):
        length >>= 8
        if not length:
            break
        if length & 255:
            p = _multmodp(rows[i][length & 255], p)
    return p


def crc_combine(crc_a: int, crc_b: int, shift_b: int) -> int:
    """crc32(A + B) from crc32(A), crc32(B) and crc_shift(len(B))."""
    return _multmodp(shift_b, crc_a) ^ crc_b


class Packed:
    """A text as raw deflate blocks that stand alone (no reference before their start) and
    end on a byte boundary, so pieces compressed apart join into one stream; its CRC-32 and
    length, for the gzip trailer."""
    __slots__ = ("deflated", "crc", "size", "shift")

    def __init__(self, deflated: bytes, data: bytes):
        self.deflated = deflated
        self.crc, self.size, self.shift = zlib.crc32(data), len(data), crc_shift(len(data))


def pack(texts: Iterable[bytes], last: bool = False) -> list[Packed]:
    """Each text compressed apart, through one compressor (a full flush after each: its
    window forgotten, so each stands alone; a compressor's start costs 25 µs, a flush 1).
    `last`: the final text ends the stream."""
    c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -15)
    out = [Packed(c.compress(data) + c.flush(zlib.Z_FULL_FLUSH), data) for data in texts]
    if last and out:
        end = out[-1]
        end.deflated += c.flush(zlib.Z_FINISH)
    return out


def unpack(p: Packed) -> bytes:
    """A piece's text."""
    return zlib.decompressobj(-15).decompress(p.deflated)


class Run:
    """Pieces one after the other as one: their compressed bytes joined, their CRC."""
    __slots__ = ("deflated", "crc", "size", "shift")

    def __init__(self, pieces: list[Packed]):
        self.deflated = b"".join(p.deflated for p in pieces)
        crc = size = 0
        for p in pieces:
            crc = crc_combine(crc, p.crc, p.shift)
            size += p.size
        self.crc, self.size, self.shift = crc, size, crc_shift(size)
