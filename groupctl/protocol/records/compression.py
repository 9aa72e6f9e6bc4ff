"""Decompressing a record batch's records (attributes bits 0-2), as Kafka's clients write them.

- 1 gzip: RFC 1952 (stdlib zlib; a gzip member, possibly several).
- 2 snappy: the Java client writes xerial's framed form (snappy-java SnappyOutputStream:
  an 8-byte magic b"\\x82SNAPPY\\0", two int32 versions, then blocks of int32 length +
  raw snappy); librdkafka and others write raw snappy. Both are read.
- 3 lz4: the LZ4 frame format (Kafka's KafkaLZ4BlockOutputStream; since magic v1 the
  header checksum is standard).
- 4 zstd: zstd frames (zstd-jni), possibly without a content size.

snappy, lz4 and zstd go through cramjam (one well-kept Rust binding for all three).
Every failure is a DecodeError naming the codec, never the library's own exception.

A batch's records decompress to at most MAX_RECORDS_BYTES: zstd turns 6.4 KB into 200 MB
of zeros (gzip 1:1000, lz4 1:250), so a hostile or damaged segment could otherwise make
one batch take more memory than the machine has (found by tests/fuzz's `batches`
harness' author; a DecodeError now). snappy is bounded by its own format (about 1:21).
"""
from __future__ import annotations

import struct
import zlib

from ..types import DecodeError

NONE, GZIP, SNAPPY, LZ4, ZSTD = range(5)
CODECS = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16          # magic + int32 version + int32 compatible version
_I32 = struct.Struct(">i").unpack_from
MAX_RECORDS_BYTES = 256 << 20   # far above one coordinator write (a 10k-member group: ~20 MB)


def decompress(codec: int, data: bytes) -> bytes:
    """The records bytes of a batch compressed with `codec` (an attributes value 1-4)."""
    name = CODECS.get(codec)
    if name is None:
        raise DecodeError(f"unknown compression codec {codec}")
    try:
        if codec == NONE:
            return data
        if codec == GZIP:
            return _gunzip(data)
        import cramjam  # here: an uncompressed __consumer_offsets never loads it

        if codec == SNAPPY:
            return _snappy(cramjam, data)
        if codec == LZ4:
            return _bounded(cramjam, cramjam.lz4.decompress_into, data)
        return _bounded(cramjam, cramjam.zstd.decompress_into, data)
    except DecodeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the libraries' errors differ; all mean damage
        raise DecodeError(f"{name}: cannot decompress {len(data)} bytes: {exc}") from None


def _too_large() -> DecodeError:
    return DecodeError(f"records decompress to more than {MAX_RECORDS_BYTES} bytes")


def _bounded(cramjam, decompress_into, data: bytes) -> bytes:
    """decompress_into a buffer grown (x4) up to MAX_RECORDS_BYTES while it is too small."""
    size = min(MAX_RECORDS_BYTES, max(1 << 16, 16 * len(data)))
    while True:
        out = bytearray(size)
        try:
            n = decompress_into(data, out)
        except cramjam.DecompressionError as exc:
            if "whole buffer" not in str(exc):
                raise
            if size >= MAX_RECORDS_BYTES:
                raise _too_large() from None
            size = min(MAX_RECORDS_BYTES, size * 4)
            continue
        del out[n:]
        return bytes(out)


def _gunzip(data: bytes) -> bytes:
    out, rest, left = [], data, MAX_RECORDS_BYTES
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        chunk = d.decompress(rest, left + 1)
        if len(chunk) > left:
            raise _too_large()
        left -= len(chunk)
        out.append(chunk)
        if not d.eof:
            raise DecodeError("gzip: truncated stream")
        rest = d.unused_data
    return b"".join(out)


def _snappy(cramjam, data: bytes) -> bytes:
    if not data.startswith(XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    out, pos = [], _XERIAL_HEADER
    while pos < len(data):
        if pos + 4 > len(data):
            raise DecodeError("snappy: truncated xerial block length")
        size = _I32(data, pos)[0]
        pos += 4
        if size < 0 or pos + size > len(data):
            raise DecodeError(f"snappy: xerial block of {size} bytes runs past the data")
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos:pos + size])))
        pos += size
    return b"".join(out)


def compress(codec: int, data: bytes) -> bytes:
    """The inverse, for tests and fixtures (snappy in the Java client's xerial form)."""
    if codec == NONE:
        return data
    if codec == GZIP:
        c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return c.compress(data) + c.flush()
    import cramjam

    if codec == SNAPPY:
        block = bytes(cramjam.snappy.compress_raw(data))
        return XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block
    if codec == LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")
