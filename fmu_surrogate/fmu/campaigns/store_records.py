"""The records of a run store's ``runs.bin`` (:mod:`fmu_surrogate.fmu.campaigns.store` describes the
layout): encoding a run as one record, decoding it, and scanning a file for its intact records,
resynchronising after a damaged one."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

try:  # ISA-L's CRC-32: the same checksum as zlib's at about ten times the speed
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a dependency; zlib is the fallback
    from zlib import crc32 as _crc32

__all__ = ["append_once", "damaged_stretch", "decode_record", "encode_record", "is_record",
           "scan_records"]

_MAGIC = b"FSR1"
_HEAD = struct.Struct("<4sIQ")
_CRC = struct.Struct("<I")


def encode_record(header: dict[str, Any], data: np.ndarray) -> bytes:
    """One ``runs.bin`` record (see the module docs) of ``header`` and ``data`` (n, n_columns).

    Workers encode their results with this, so that the process that owns the store only has
    to append the bytes (:meth:`RunStore.append_record`).
    """
    body = np.ascontiguousarray(data, dtype="<f8").reshape(-1).view(np.uint8)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    crc = _crc32(body, _crc32(h))
    return b"".join((_HEAD.pack(_MAGIC, len(h), body.size), h, body, _CRC.pack(crc)))


def append_once(fd: int, rec: bytes) -> int:
    """Append the record ``rec`` to the store file ``fd`` (opened ``O_APPEND``) in one
    ``write``; the bytes written (fewer than ``len(rec)`` only on a full disk).

    One ``write`` on an ``O_APPEND`` file keeps whole records of several writers (the harvest
    and its workers) from interleaving.  Every writer of a store appends through this function.
    """
    return os.write(fd, rec)


def decode_record(rec: bytes | memoryview, n_columns: int) -> tuple[dict[str, Any], np.ndarray]:
    """Inverse of :func:`encode_record` for one complete record (no CRC check: it comes from a
    pipe, not from disk).  The data is a read-only view of ``rec``."""
    _magic, hl, dl = _HEAD.unpack_from(rec, 0)
    h0 = _HEAD.size
    header = json.loads(bytes(rec[h0:h0 + hl]))
    data = np.frombuffer(rec, dtype="<f8", count=dl // 8, offset=h0 + hl)
    return header, data.reshape(-1, n_columns)


def is_record(msg: bytes | memoryview) -> bool:
    """Whether ``msg`` starts like a record of :func:`encode_record`."""
    return bytes(msg[:4]) == _MAGIC


def scan_records(raw: bytes, n_columns: int, discarded: dict[str, int],
                 damaged_indices: list[int | None] | None = None,
                 ) -> Iterator[tuple[Any, np.ndarray, int]]:
    """Every intact record of ``raw`` as ``(header, data, end offset)``, in file order.

    A damaged record is skipped by resynchronising at the next magic whose record is intact; it
    and a torn tail are counted in ``discarded["damaged"]`` and ``discarded["damaged_bytes"]``.
    A damaged stretch holds one record per magic in it (the first one's may be the damage).
    ``damaged_indices`` receives the run index of each damaged record whose header still reads
    (``None`` for those whose header is damaged too).
    A record whose data does not fit ``n_columns`` comes with an empty ``data``.
    """
    lost = damaged_indices if damaged_indices is not None else []

    def damaged(start: int, stop: int) -> None:
        indices = damaged_stretch(raw, start, stop)
        discarded["damaged"] += len(indices)
        discarded["damaged_bytes"] += stop - start
        lost.extend(indices)

    mv = memoryview(raw)
    pos, size = 0, len(raw)
    last_end = 0
    while pos + _HEAD.size <= size:
        parsed = _parse_at(raw, mv, pos, size, n_columns)
        if parsed is None:  # damaged here: resynchronise at the next magic
            nxt = raw.find(_MAGIC, pos + 1)
            while nxt != -1 and _parse_at(raw, mv, nxt, size, n_columns) is None:
                nxt = raw.find(_MAGIC, nxt + 1)
            if nxt == -1:
                break  # a torn tail (or damage up to the end)
            damaged(pos, nxt)
            pos = nxt
            continue
        last_end = pos = parsed[2]
        yield parsed
    if last_end < size:  # a torn tail (a run killed mid-write) or damage up to the end
        damaged(last_end, size)


def damaged_stretch(raw: bytes, start: int, stop: int) -> list[int | None]:
    """The records of the damaged stretch ``raw[start:stop]`` (which starts where a record
    should): one per magic in it, the first one's may be the damage; for each its run index
    when its header still reads, else ``None``."""
    mv = memoryview(raw)
    starts = [start]
    at = raw.find(_MAGIC, start + 1, stop)
    while at != -1:
        starts.append(at)
        at = raw.find(_MAGIC, at + 1, stop)
    return [_index_at(mv, p, stop) for p in starts]


def _index_at(mv: memoryview, pos: int, stop: int) -> int | None:
    """The run index in the header of the (damaged) record at ``pos``, if its header reads."""
    if pos + _HEAD.size > stop:
        return None
    magic, hl, _dl = _HEAD.unpack_from(mv, pos)
    h0 = pos + _HEAD.size
    if magic != _MAGIC or h0 + hl > stop:
        return None
    try:
        header = json.loads(bytes(mv[h0:h0 + hl]).decode("utf-8"))
    except ValueError:
        return None
    index = header.get("index") if isinstance(header, dict) else None
    return index if isinstance(index, int) else None


def _parse_at(raw: bytes, mv: memoryview, pos: int, size: int,
              n_columns: int) -> tuple[Any, np.ndarray, int] | None:
    if pos + _HEAD.size > size:
        return None
    magic, hl, dl = _HEAD.unpack_from(mv, pos)
    end = pos + _HEAD.size + hl + dl + _CRC.size
    if magic != _MAGIC or end > size or dl % 8:
        return None
    h0 = pos + _HEAD.size
    hb, db = mv[h0:h0 + hl], mv[h0 + hl:h0 + hl + dl]
    (crc,) = _CRC.unpack_from(mv, h0 + hl + dl)
    if _crc32(db, _crc32(hb)) != crc:
        return None
    try:
        header = json.loads(bytes(hb).decode("utf-8"))
    except ValueError:
        return None
    if (dl // 8) % n_columns:
        return header, np.empty((0, n_columns)), end  # judged invalid by _valid
    data = np.frombuffer(raw, dtype="<f8", count=dl // 8,
                         offset=h0 + hl).reshape(-1, n_columns)
    return header, data, end
