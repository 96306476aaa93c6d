"""Crash-safe on-disk store of finished runs (``OUT.nc.parts/``), used to resume campaigns.

Layout of the store directory::

    campaign.json   manifest: format, campaign hash, FMU hash, grid, record, plan, signals
                    (written once, atomically)
    runs.bin        append-only: one record per finished run
    lock            an exclusive ``flock`` while a harvest writes to the store

A record of ``runs.bin`` is::

    b"FSR1" | uint32 header length | uint64 data length | header (JSON, UTF-8)
            | data (float64 little-endian, n_samples x n_columns, row-major) | uint32 CRC-32

The CRC covers header and data.  The header carries the ``campaign`` hash and the run ``index``;
records of another campaign, or whose index, sample count or shape do not fit the manifest, are
refused (not merged) and counted.  A record is appended with a single ``write`` on an unbuffered
file, so a process killed with SIGKILL leaves either whole records or one torn record at the
end.  The scanner resynchronises after a damaged record (it looks for the next magic whose CRC
holds), so one flipped bit costs one record, not every later one; :meth:`RunStore.open` cuts a
torn tail and :attr:`RunStore.discarded` says what was dropped and why.  No fsync: data that
reached the kernel survives the death of the process (not a power cut).  Nothing is pickled.

The records are encoded, decoded and scanned by :mod:`~fmu_surrogate.fmu.campaigns.store_records`.

Concurrency: :meth:`RunStore.open` takes the exclusive lock *before* it reads or writes anything
else in the store, so two harvests started together on one path cannot interleave their
manifests; the loser is told whether the winner runs the same or another campaign.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.fmu.campaigns import store_records
from fmu_surrogate.fmu.campaigns.store_records import (
    damaged_stretch,
    encode_record,
    scan_records,
)
from fmu_surrogate.fmu.errors import FMUError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, single writer assumed
    fcntl = None  # type: ignore[assignment]

__all__ = ["STORE_FORMAT", "RunStore", "StoreLockedError", "StoreMismatchError", "encode_record"]

STORE_FORMAT = "fmu-surrogate run store"
STORE_VERSION = 1


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
        #: what the last scan dropped: ``{"damaged": records, "damaged_bytes": bytes,
        #: "foreign": records of another campaign, "invalid": records that do not fit}``
        self.discarded: dict[str, int] = {}
        #: run index of each damaged record whose header still reads (``None``: unreadable)
        self.damaged_indices: list[int | None] = []
        self._intact_end = 0
        self._cut: tuple[int, int, list[int | None]] = (0, 0, [])  # the torn tail open() cut

    # ------------------------------------------------------------------ open / create
    @classmethod
    def open(cls, path: str | os.PathLike, manifest: dict[str, Any], *,
             overwrite: bool = False, recover: bool = False) -> RunStore:
        """Create the store, or reopen it for the same campaign.

        Parameters
        ----------
        path : path
            Store directory (e.g. ``OUT.nc.parts``).
        manifest : dict
            Must contain ``campaign_hash`` and ``n_columns``.
        overwrite : bool
            Delete a store of a different campaign instead of refusing.
        recover : bool
            A store whose ``campaign.json`` is missing or unreadable: write this campaign's
            manifest and keep the records that carry this campaign's hash (the others are
            discarded and counted), instead of refusing.

        Raises
        ------
        StoreMismatchError
            A store of another campaign exists and ``overwrite`` is false, or a store without a
            readable manifest and neither ``recover`` nor ``overwrite``.
        StoreLockedError
            Another harvest process is writing to this store.
        """
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise StoreMismatchError(f"{path} exists and is not a folder; the run store of this "
                                     f"output needs that name: move the file away.")
        path.mkdir(parents=True, exist_ok=True)
        store = cls(path, manifest)
        store._lock()  # before anything else is read or written
        try:
            store.manifest = cls._settle_manifest(path, manifest, overwrite, recover)
            store._truncate_torn_tail()
            store._fd = os.open(path / "runs.bin", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def _settle_manifest(cls, path: Path, manifest: dict[str, Any], overwrite: bool,
                         recover: bool) -> dict[str, Any]:
        """With the lock held: adopt the same campaign's manifest, or refuse/replace."""
        man_path = path / "campaign.json"
        runs = path / "runs.bin"
        has_runs = runs.exists() and runs.stat().st_size > 0
        old = cls.read_manifest(path)
        h = manifest["campaign_hash"]
        if old is not None and old.get("campaign_hash") == h:
            return old
        if old is not None or has_runs:
            if old is None and recover:
                cls._write_manifest(path, manifest)
                return manifest
            if not overwrite:
                if old is not None:
                    raise StoreMismatchError(
                        f"{path} holds the unfinished runs of a different campaign "
                        f"{str(old.get('campaign_hash', '?'))[:12]} of "
                        f"{old.get('fmu_name', '?')}; this campaign ({h[:12]}) differs in the "
                        f"FMU, the plan, the signals, the time grid or the recorded variables. Use "
                        f"another output path, or --overwrite (overwrite=True) to discard those "
                        f"runs.")
                state = "unreadable" if man_path.exists() else "missing"
                raise StoreMismatchError(
                    f"{path} holds runs but its campaign.json is {state}, so it is not adopted. "
                    f"Every record carries its campaign's hash: run the same command with "
                    f"--recover-store (recover=True) to keep the records of this campaign, or "
                    f"--overwrite to discard them all.")
            for child in path.iterdir():  # keep the lock file: we hold it
                if child.name == "lock":
                    continue
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        cls._write_manifest(path, manifest)
        return manifest

    @staticmethod
    def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
        tmp = path / "campaign.json.part"
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path / "campaign.json")

    @classmethod
    def read_manifest(cls, path: str | os.PathLike) -> dict[str, Any] | None:
        """The manifest of the store at ``path``, or ``None`` if there is none (or unreadable)."""
        try:
            man = json.loads((Path(path) / "campaign.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return man if isinstance(man, dict) and "campaign_hash" in man else None

    def _lock(self) -> None:
        fd = os.open(self.path / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            other = self.read_manifest(self.path)
            mine = self.manifest["campaign_hash"]
            if other is None:
                who = "another harvest process is starting on this path"
            elif other.get("campaign_hash") == mine:
                who = "another harvest process is writing this same campaign"
            else:
                who = (f"another harvest process is writing a different campaign "
                       f"({str(other.get('campaign_hash', '?'))[:12]}) to this path")
            raise StoreLockedError(
                f"{self.path}: {who}; wait for it to finish (then run the command again to "
                f"resume or reuse its result) or use another output path.") from None
        try:
            same = os.stat(self.path / "lock").st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the store was removed (a harvest that finished) while we waited
            os.close(fd)
            raise StoreLockedError(
                f"{self.path}: another harvest process finished on this path and removed its "
                f"run store just now; run the command again (it then finds that harvest's "
                f"output) or use another output path.")
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd

    def _truncate_torn_tail(self) -> None:
        runs = self.path / "runs.bin"
        if not runs.exists():
            return
        for _ in self._scan():
            pass
        size = runs.stat().st_size
        if self._intact_end < size:  # cut only the torn tail; later scans still count it
            with open(runs, "r+b") as f:
                f.seek(self._intact_end)
                tail = damaged_stretch(f.read(), 0, size - self._intact_end)
                f.truncate(self._intact_end)
            self._cut = (len(tail), size - self._intact_end, tail)

    # ------------------------------------------------------------------ write
    def append(self, header: dict[str, Any], data: np.ndarray) -> None:
        """Append one finished run (``header`` JSON-serialisable; ``data`` (n, n_columns)).

        The header gets this campaign's hash (``"campaign"``) unless it carries one.
        """
        data = np.asarray(data)
        if data.ndim != 2 or data.shape[1] != self.n_columns:
            raise InvalidInputError(f"data must have shape (n, {self.n_columns}), got {data.shape}")
        header = {"campaign": self.manifest["campaign_hash"], **header}
        self.append_record(encode_record(header, data))

    def append_record(self, rec: bytes) -> None:
        """Append one record made by :func:`encode_record` (a single ``write``)."""
        n = store_records.append_once(self._fd, rec)  # no fsync (see module docs)
        if n != len(rec):  # pragma: no cover - disk full: finish the record or fail loudly
            view = memoryview(rec)
            while n < len(rec):
                n += os.write(self._fd, view[n:])

    @property
    def runs_path(self) -> Path:
        """The file of the records (``runs.bin``), to which workers may append records of
        :func:`encode_record` themselves, one ``write`` each on an ``O_APPEND`` descriptor, while
        this store holds the lock."""
        return self.path / "runs.bin"

    # ------------------------------------------------------------------ read
    def _valid(self, header: Any, data: np.ndarray) -> str:
        """'' if the record belongs to this campaign and fits it, else 'foreign'/'invalid'."""
        if not isinstance(header, dict):
            return "invalid"
        if header.get("campaign", self.manifest["campaign_hash"]) != \
                self.manifest["campaign_hash"]:
            return "foreign"
        n_runs = self.manifest.get("n_runs")
        index = header.get("index")
        if not isinstance(index, int) or index < 0 or (n_runs is not None and index >= n_runs):
            return "invalid"
        n = header.get("n", data.shape[0])
        n_time = (self.manifest.get("time") or {}).get("n")
        if not isinstance(n, int) or n != data.shape[0]:
            return "invalid"
        if not header.get("kind") and n_time is not None and n != n_time:
            return "invalid"  # an "ok" run must cover the whole grid
        return ""

    def _scan(self) -> Iterator[tuple[dict[str, Any], np.ndarray, int]]:
        """Valid records of this campaign with their end offsets; fills :attr:`discarded`."""
        runs = self.path / "runs.bin"
        n_cut, bytes_cut, cut = self._cut  # the torn tail open() cut is still a loss
        self.discarded = {"damaged": n_cut, "damaged_bytes": bytes_cut, "foreign": 0,
                          "invalid": 0}
        self.damaged_indices = list(cut)
        try:
            raw = runs.read_bytes()
        except FileNotFoundError:
            return
        self._intact_end = 0
        for header, data, end in scan_records(raw, self.n_columns, self.discarded,
                                              self.damaged_indices):
            self._intact_end = end
            verdict = self._valid(header, data)
            if verdict:
                self.discarded[verdict] += 1
            else:
                yield header, data, end

    def discarded_text(self) -> str:
        """What the last scan dropped, as ``"dropped ..."`` ('' when nothing was)."""
        d = self.discarded
        parts = []
        if d.get("damaged"):
            parts.append(f"{d['damaged']} damaged record(s) ({d['damaged_bytes']} bytes, CRC or "
                         f"framing broken)")
        if d.get("foreign"):
            parts.append(f"{d['foreign']} record(s) of another campaign")
        if d.get("invalid"):
            parts.append(f"{d['invalid']} record(s) whose run index or sample count do not fit "
                         f"this campaign")
        return "dropped " + "; ".join(parts) if parts else ""

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
        """Delete the store directory, then close it (the lock is held until it is gone)."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
