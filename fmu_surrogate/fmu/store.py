"""Crash-safe on-disk store of finished runs (``OUT.nc.parts/``), used to resume campaigns.

Layout of the store directory::

    campaign.json   manifest: format, campaign hash, FMU hash, grid, record, plan, signals
                    (written once, atomically)
    runs.bin        append-only: one record per finished run
    lock            an exclusive ``flock`` while a harvest writes to the store

A record of ``runs.bin`` is::

    b"FSR1" | uint32 header length | uint64 data length | header (JSON, UTF-8)
            | data (float64 little-endian, n_samples x n_columns, row-major) | uint32 CRC-32

The CRC covers header and data.  A record is appended with a single ``write`` on an unbuffered
file, so a process killed with SIGKILL leaves either whole records or one torn record at the
end, which :meth:`RunStore.read` detects (short read or CRC mismatch) and :meth:`RunStore.open`
truncates away.  No fsync: data that reached the kernel survives the death of the process (not a
power cut).  Nothing is pickled.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self

from fmu_surrogate.fmu.errors import FMUError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, single writer assumed
    fcntl = None  # type: ignore[assignment]

__all__ = ["STORE_FORMAT", "RunStore", "StoreLockedError", "StoreMismatchError", "encode_record"]

STORE_FORMAT = "fmu-surrogate run store"
STORE_VERSION = 1
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
    crc = zlib.crc32(body, zlib.crc32(h))
    return b"".join((_HEAD.pack(_MAGIC, len(h), body.size), h, body, _CRC.pack(crc)))


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


class StoreMismatchError(FMUError):
    """The store at this path belongs to a different campaign."""


class StoreLockedError(FMUError):
    """Another process is writing to the store."""


class RunStore:
    """Append-only store of finished runs of one campaign.

    Use :meth:`open` (creates or resumes); then :meth:`append` per finished run.

    Attributes
    ----------
    path : Path
        The store directory.
    manifest : dict
        Content of ``campaign.json``.
    """

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = Path(path)
        self.manifest = manifest
        self.n_columns = int(manifest["n_columns"])
        self._fd: int | None = None
        self._lock_fd: int | None = None

    # ------------------------------------------------------------------ open / create
    @classmethod
    def open(cls, path: str | os.PathLike, manifest: dict[str, Any], *,
             overwrite: bool = False) -> RunStore:
        """Create the store, or reopen it for the same campaign.

        Parameters
        ----------
        path : path
            Store directory (e.g. ``OUT.nc.parts``).
        manifest : dict
            Must contain ``campaign_hash`` and ``n_columns``.
        overwrite : bool
            Delete a store of a different campaign instead of refusing.

        Raises
        ------
        StoreMismatchError
            A store of another campaign exists and ``overwrite`` is false.
        StoreLockedError
            Another harvest process is writing to this store.
        """
        path = Path(path)
        man_path = path / "campaign.json"
        if path.exists() and man_path.is_file():
            try:
                old = json.loads(man_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                old = None
            same = old is not None and old.get("campaign_hash") == manifest["campaign_hash"]
            if not same:
                if not overwrite:
                    what = (f"campaign {old.get('campaign_hash', '?')[:12]} of "
                            f"{old.get('fmu_name', '?')}" if old else "an unreadable campaign")
                    raise StoreMismatchError(
                        f"{path} holds the unfinished runs of a different {what}; this campaign "
                        f"({manifest['campaign_hash'][:12]}) differs in the FMU, the plan, the "
                        f"signals, the time grid or the recorded variables. Use another output "
                        f"path, or --overwrite (overwrite=True) to discard those runs."
                    )
                cls._remove_dir(path)
            else:
                manifest = old
        if not man_path.is_file():
            path.mkdir(parents=True, exist_ok=True)
            tmp = path / "campaign.json.part"
            tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
            os.replace(tmp, man_path)
        store = cls(path, manifest)
        store._lock()
        store._truncate_torn_tail()
        store._fd = os.open(path / "runs.bin", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return store

    @staticmethod
    def _remove_dir(path: Path) -> None:
        lock = path / "lock"
        if lock.exists() and fcntl is not None:
            fd = os.open(lock, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise StoreLockedError(f"{path} is being written by another harvest process; "
                                       f"wait for it to finish or use another output path.") \
                    from None
            os.close(fd)
        shutil.rmtree(path)

    @classmethod
    def read_manifest(cls, path: str | os.PathLike) -> dict[str, Any] | None:
        """The manifest of the store at ``path``, or ``None`` if there is none."""
        try:
            return json.loads((Path(path) / "campaign.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _lock(self) -> None:
        fd = os.open(self.path / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreLockedError(
                f"{self.path} is being written by another harvest process (same campaign); wait "
                f"for it to finish, or stop it, then run the command again to resume.") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd

    def _truncate_torn_tail(self) -> None:
        runs = self.path / "runs.bin"
        if not runs.exists():
            return
        good = 0
        for _, _, end in self._scan():
            good = end
        if good < runs.stat().st_size:
            with open(runs, "r+b") as f:
                f.truncate(good)

    # ------------------------------------------------------------------ write
    def append(self, header: dict[str, Any], data: np.ndarray) -> None:
        """Append one finished run (``header`` JSON-serialisable; ``data`` (n, n_columns))."""
        data = np.asarray(data)
        if data.ndim != 2 or data.shape[1] != self.n_columns:
            raise ValueError(f"data must have shape (n, {self.n_columns}), got {data.shape}")
        self.append_record(encode_record(header, data))

    def append_record(self, rec: bytes) -> None:
        """Append one record made by :func:`encode_record` (a single ``write``)."""
        n = os.write(self._fd, rec)  # one write on an O_APPEND fd; no fsync (see module docs)
        if n != len(rec):  # pragma: no cover - disk full: finish the record or fail loudly
            view = memoryview(rec)
            while n < len(rec):
                n += os.write(self._fd, view[n:])

    # ------------------------------------------------------------------ read
    def _scan(self) -> Iterator[tuple[dict[str, Any], np.ndarray, int]]:
        runs = self.path / "runs.bin"
        try:
            raw = runs.read_bytes()
        except FileNotFoundError:
            return
        mv = memoryview(raw)
        pos, size = 0, len(raw)
        while pos + _HEAD.size <= size:
            magic, hl, dl = _HEAD.unpack_from(mv, pos)
            end = pos + _HEAD.size + hl + dl + _CRC.size
            if magic != _MAGIC or end > size:
                return
            h0 = pos + _HEAD.size
            hb, db = mv[h0:h0 + hl], mv[h0 + hl:h0 + hl + dl]
            (crc,) = _CRC.unpack_from(mv, h0 + hl + dl)
            if zlib.crc32(db, zlib.crc32(hb)) != crc:
                return
            try:
                header = json.loads(bytes(hb).decode("utf-8"))
            except ValueError:
                return
            data = np.frombuffer(raw, dtype="<f8", count=dl // 8,
                                 offset=h0 + hl).reshape(-1, self.n_columns)
            yield header, data, end
            pos = end

    def read(self) -> Iterator[tuple[dict[str, Any], np.ndarray]]:
        """All valid records in file order as ``(header, data)`` (a torn tail is skipped).

        ``data`` are read-only views of one buffer holding the whole file."""
        for header, data, _ in self._scan():
            yield header, data

    def finished(self) -> dict[int, dict[str, Any]]:
        """``{run index: header}`` of the runs already in the store."""
        return {int(h["index"]): h for h, _ in self.read()}

    # ------------------------------------------------------------------ close
    def close(self) -> None:
        """Close the file and release the lock (the store stays on disk)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def remove(self) -> None:
        """Close and delete the store directory."""
        self.close()
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
