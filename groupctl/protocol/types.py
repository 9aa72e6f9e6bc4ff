"""Kafka's primitive wire types: a Reader over received bytes and a Writer building a frame.

Every multi-byte integer is big-endian. "Compact" forms (flexible versions) carry an
unsigned varint of length+1, where 0 means null. Readers raise DecodeError, never
IndexError or struct.error, so a truncated or foreign frame is reported, not a traceback.
"""
from __future__ import annotations

import builtins  # annotations inside Reader/Writer, whose `bool` methods shadow the type
import struct
import uuid as _uuid

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"  # Kafka prints Uuid.ZERO_UUID in this base64 form


class DecodeError(ValueError):
    """The bytes do not form the expected structure (truncated, corrupt, foreign)."""


def uuid_to_str(raw: bytes) -> str:
    """Kafka renders topic ids as url-safe base64 without padding."""
    import base64

    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def uuid_from_str(text: str | None) -> bytes:
    import base64

    if not text:
        return bytes(16)
    if len(text) == 36:  # dashed hex form, as tools sometimes print it
        return _uuid.UUID(text).bytes
    return base64.urlsafe_b64decode(text + "==")


class Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int = 0):
        self.buf = buf
        self.pos = pos

    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def _fixed(self, codec: struct.Struct):
        pos = self.pos
        end = pos + codec.size
        if end > len(self.buf):
            raise DecodeError(f"need {codec.size} bytes at offset {pos}, have {len(self.buf) - pos}")
        self.pos = end
        return codec.unpack_from(self.buf, pos)[0]

    def int8(self) -> int:
        return self._fixed(_I8)

    def int16(self) -> int:
        return self._fixed(_I16)

    def uint16(self) -> int:
        return self._fixed(_U16)

    def int32(self) -> int:
        return self._fixed(_I32)

    def uint32(self) -> int:
        return self._fixed(_U32)

    def int64(self) -> int:
        return self._fixed(_I64)

    def float64(self) -> float:
        return self._fixed(_F64)

    def bool(self) -> bool:
        return self._fixed(_I8) != 0

    def raw(self, n: int) -> bytes:
        pos = self.pos
        if n < 0 or pos + n > len(self.buf):
            raise DecodeError(f"need {n} bytes at offset {pos}, have {len(self.buf) - pos}")
        self.pos = pos + n
        return bytes(self.buf[pos:pos + n])

    def uuid(self) -> str:
        return uuid_to_str(self.raw(16))

    def uvarint(self) -> int:
        buf, pos, shift, value = self.buf, self.pos, 0, 0
        while True:
            if pos >= len(buf):
                raise DecodeError("truncated varint")
            b = buf[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise DecodeError("varint too long")
        self.pos = pos
        return value

    def varint(self) -> int:
        v = self.uvarint()
        return (v >> 1) ^ -(v & 1)

    varlong = varint

    # Length-prefixed forms. `compact` selects the flexible-version encoding.
    def length(self, compact: builtins.bool) -> int:
        return self.uvarint() - 1 if compact else self.int32()

    def string(self, compact: builtins.bool = False) -> str | None:
        n = self.uvarint() - 1 if compact else self.int16()
        if n < 0:
            return None
        try:
            return self.raw(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"invalid UTF-8 in string: {exc}") from None

    def bytes(self, compact: builtins.bool = False) -> bytes | None:
        n = self.uvarint() - 1 if compact else self.int32()
        return None if n < 0 else self.raw(n)


class Writer:
    __slots__ = ("buf",)

    def __init__(self):
        self.buf = bytearray()

    def getvalue(self) -> bytes:
        return bytes(self.buf)

    def int8(self, v: int):
        self.buf += _I8.pack(v)

    def int16(self, v: int):
        self.buf += _I16.pack(v)

    def uint16(self, v: int):
        self.buf += _U16.pack(v)

    def int32(self, v: int):
        self.buf += _I32.pack(v)

    def uint32(self, v: int):
        self.buf += _U32.pack(v)

    def int64(self, v: int):
        self.buf += _I64.pack(v)

    def float64(self, v: float):
        self.buf += _F64.pack(v)

    def bool(self, v: bool):
        self.buf.append(1 if v else 0)

    def raw(self, b: bytes | bytearray):
        self.buf += b

    def uuid(self, v: str | None):
        self.buf += uuid_from_str(v)

    def uvarint(self, v: int):
        if v < 0:
            raise ValueError("unsigned varint cannot be negative")
        while v >= 0x80:
            self.buf.append((v & 0x7F) | 0x80)
            v >>= 7
        self.buf.append(v)

    def varint(self, v: int):
        self.uvarint((v << 1) ^ (v >> 63))

    varlong = varint

    def length(self, n: int | None, compact: builtins.bool):
        if compact:
            self.uvarint(0 if n is None else n + 1)
        else:
            self.int32(-1 if n is None else n)

    def string(self, v: str | None, compact: builtins.bool = False):
        if v is None:
            self.uvarint(0) if compact else self.int16(-1)
            return
        data = v.encode("utf-8")
        self.uvarint(len(data) + 1) if compact else self.int16(len(data))
        self.buf += data

    def bytes(self, v: bytes | None, compact: builtins.bool = False):
        if v is None:
            self.length(None, compact)
            return
        self.length(len(v), compact)
        self.buf += v
