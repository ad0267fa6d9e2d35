"""Kafka's wire primitives: big-endian integers, strings, arrays, and the compact forms with
tagged fields that "flexible" message versions use (KIP-482).

Classic forms:  string = int16 length + UTF-8 (-1: null); bytes and arrays = int32 length (-1: null).
Compact forms:  unsigned varint of length + 1 (0: null) for strings, bytes and arrays, and every
                structure ends in a tagged-field section: a varint count, then (tag, size, data).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


class TruncatedMessageError(ValueError):
    """A message ended before the fields its version promises."""


class Writer:
    __slots__ = ("buffer",)

    def __init__(self) -> None:
        self.buffer = bytearray()

    def int8(self, value: int) -> Writer:
        self.buffer += _INT8.pack(value)
        return self

    def boolean(self, value: bool) -> Writer:
        return self.int8(1 if value else 0)

    def int16(self, value: int) -> Writer:
        self.buffer += _INT16.pack(value)
        return self

    def int32(self, value: int) -> Writer:
        self.buffer += _INT32.pack(value)
        return self

    def int64(self, value: int) -> Writer:
        self.buffer += _INT64.pack(value)
        return self

    def uvarint(self, value: int) -> Writer:
        while value >= 0x80:
            self.buffer.append((value & 0x7F) | 0x80)
            value >>= 7
        self.buffer.append(value)
        return self

    def string(self, value: str | None, compact: bool = False) -> Writer:
        if value is None:
            return self.uvarint(0) if compact else self.int16(-1)
        data = value.encode()
        if compact:
            self.uvarint(len(data) + 1)
        else:
            self.int16(len(data))
        self.buffer += data
        return self

    def bytes_(self, value: bytes | None, compact: bool = False) -> Writer:
        if value is None:
            return self.uvarint(0) if compact else self.int32(-1)
        if compact:
            self.uvarint(len(value) + 1)
        else:
            self.int32(len(value))
        self.buffer += value
        return self

    def array(
        self, items: Iterable[T] | None, write_item: Callable[[Writer, T], object], compact: bool = False
    ) -> Writer:
        if items is None:
            return self.uvarint(0) if compact else self.int32(-1)
        listed = list(items)
        if compact:
            self.uvarint(len(listed) + 1)
        else:
            self.int32(len(listed))
        for item in listed:
            write_item(self, item)
        return self

    def no_tagged_fields(self) -> Writer:
        return self.uvarint(0)


class Reader:
    __slots__ = ("data", "position")

    def __init__(self, data: bytes | memoryview, position: int = 0) -> None:
        self.data = data
        self.position = position

    def _unpack(self, layout: struct.Struct) -> int:
        try:
            (value,) = layout.unpack_from(self.data, self.position)
        except struct.error:
            raise TruncatedMessageError(f"message ends at byte {len(self.data)}") from None
        self.position += layout.size
        return int(value)

    def int8(self) -> int:
        return self._unpack(_INT8)

    def boolean(self) -> bool:
        return self._unpack(_INT8) != 0

    def int16(self) -> int:
        return self._unpack(_INT16)

    def int32(self) -> int:
        return self._unpack(_INT32)

    def int64(self) -> int:
        return self._unpack(_INT64)

    def uvarint(self) -> int:
        value = shift = 0
        data = self.data
        while True:
            if self.position >= len(data):
                raise TruncatedMessageError(f"message ends at byte {len(data)} inside a varint")
            byte = data[self.position]
            self.position += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ValueError("varint longer than 64 bits")

    def _length(self, compact: bool, wide: bool) -> int:
        """The length of a string, byte string or array; -1 for null."""
        if compact:
            return self.uvarint() - 1
        return self.int32() if wide else self.int16()

    def _take(self, length: int) -> bytes | memoryview:
        end = self.position + length
        if end > len(self.data):
            raise TruncatedMessageError(f"message ends at byte {len(self.data)}, a field needs {end}")
        chunk = self.data[self.position : end]
        self.position = end
        return chunk

    def string(self, compact: bool = False) -> str | None:
        length = self._length(compact, wide=False)
        if length < 0:
            return None
        return bytes(self._take(length)).decode("utf-8", errors="replace")

    def bytes_(self, compact: bool = False) -> bytes | None:
        length = self._length(compact, wide=True)
        if length < 0:
            return None
        return bytes(self._take(length))

    def array_length(self, compact: bool = False) -> int:
        """The item count of an array (0 for a null array)."""
        return max(self._length(compact, wide=True), 0)

    def skip_tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # the tag: kafkadiag reads none of the optional fields
            self._take(self.uvarint())

    def skip(self, size: int) -> None:
        self._take(size)

    def int32_array(self, compact: bool = False) -> list[int]:
        count = self.array_length(compact)
        layout = struct.Struct(f">{count}i")
        try:
            values = layout.unpack_from(self.data, self.position)
        except struct.error:
            raise TruncatedMessageError(f"message ends at byte {len(self.data)} inside an array") from None
        self.position += layout.size
        return list(values)
