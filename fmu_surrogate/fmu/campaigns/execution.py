"""Execution of a campaign: resume from the run store, simulate the missing runs in isolated
workers (or on a Dask cluster), append every finished run to the store, consolidate the dataset
and write it; with the timings of these phases.

A finished dataset is never replaced without ``overwrite``: the output ``OUT`` is judged with the
run store's lock held (every harvest writing ``OUT`` holds that lock), and the new dataset
replaces ``OUT`` only if ``OUT`` is still the file judged then (absent, or the same file).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time as _time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from fmu_surrogate.fmu.campaigns.dask_runs import _run_dask
from fmu_surrogate.fmu.campaigns.store import RunStore, StoreMismatchError
from fmu_surrogate.fmu.errors import ExperimentError, FMUError
from fmu_surrogate.fmu.runner.pool import RunResult, WorkerPool
from fmu_surrogate.fmu.runner.tempdirs import scratch_root

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

    from fmu_surrogate.fmu.dataset import ChunkDeflater
    from fmu_surrogate.fmu.model.info import FMUInfo
    from fmu_surrogate.fmu.runner.runs import RunnerConfig, RunSpec


class CampaignPlan(Protocol):
    """What :func:`run_campaign` needs of a campaign: the
    :class:`~fmu_surrogate.fmu.campaigns.campaign.Campaign` satisfies it."""

    info: FMUInfo
    time: np.ndarray
    runs: list[RunSpec]
    timings: dict[str, float]
    cpu_timings: dict[str, float]

    @property
    def n_runs(self) -> int: ...

    @property
    def campaign_hash(self) -> str: ...

    def runner_config(self, backend: str = "auto") -> RunnerConfig: ...

    def _manifest(self, cfg: RunnerConfig) -> dict[str, Any]: ...

    def _collected_dataset(self, col: _Collector, cfg: RunnerConfig) -> xr.Dataset: ...


def run_campaign(camp: CampaignPlan, out: str | os.PathLike | None = None, *,
                 workers: int | None = None, timeout: float | None = 60.0, scheduler: Any = None,
                 progress: bool = True, backend: str = "auto", overwrite: bool = False,
                 keep_store: bool = False, batch_size: int | None = None, complevel: int = 1,
                 start_method: str = "auto", recover_store: bool = False) -> xr.Dataset:
    """Simulate every run of ``camp`` not yet on disk and return the dataset
    (:meth:`Campaign.run <fmu_surrogate.fmu.campaigns.campaign.Campaign.run>` documents the options)."""
    from fmu_surrogate.fmu.backends.native_loop import native_library
    from fmu_surrogate.fmu.dataset import RERUN_KINDS, ChunkDeflater, part_path, save_dataset

    _check_options(backend, workers, timeout, complevel, start_method)
    t_begin = _time.perf_counter()
    c_begin = _time.process_time()
    camp.timings = {}
    camp.cpu_timings = {}
    camp.notes = []
    h = camp.campaign_hash
    tmpdir = None
    if out is None:
        tmpdir = tempfile.TemporaryDirectory(prefix="store-", dir=scratch_root())
        store_path = Path(tmpdir.name) / "runs.parts"
    else:
        out = Path(out)
        store_path = out.with_name(out.name + ".parts")
        if out.is_dir():
            raise ExperimentError(f"the output path {out} is a folder; give a file name such "
                                  f"as {out / (camp.info.name + '.nc')}.")
        if not out.parent.is_dir():
            raise ExperimentError(f"the folder of the output path {out} does not exist; "
                                  f"create {out.parent} first.")
        # a first look, to refuse or finish early; the check that counts is made again under
        # the store's lock below
        if out.exists() and _judge_output(out, h, overwrite) and not store_path.exists():
            return _complete(camp, out, progress, t_begin)
    cfg = camp.runner_config(backend)
    store = RunStore.open(store_path, camp._manifest(cfg), overwrite=overwrite,
                          recover=recover_store)
    pool = None
    deflater = None
    try:
        col = _Collector(camp.n_runs, camp.time.shape[0], cfg.n_columns)
        n_records = 0
        for hd, data in store.read():  # resumed runs (the latest record of a run wins)
            n_records += 1
            index = int(hd["index"])
            if hd.get("kind", "") in RERUN_KINDS:  # interrupted from outside: simulate again
                col.have[index] = False
                continue
            col.add(index, hd.get("kind", ""), hd.get("message", ""),
                    float(hd.get("wall", float("nan"))), data)
        todo = [s for s in camp.runs if not col.have[s.index]]
        # with the lock held, nobody else's harvest can write OUT: check it now, and refuse to
        # replace it at the end if it changed in between (a writer that is not a harvest)
        seen = None
        if out is not None:
            seen = _file_state(out)
            try:
                complete = seen is not None and _judge_output(out, h, overwrite)
            except StoreMismatchError:
                if not n_records:  # made by this call: leave nothing behind
                    store.remove()
                raise
            if complete and not todo:
                if keep_store:
                    store.close()
                else:
                    store.remove()
                return _complete(camp, out, progress, t_begin)
        notice = damage_notice(store, col, todo)
        if notice:
            camp.notes.append(notice)
            print(notice, file=sys.stderr)
        counts: Counter = Counter()
        for k in col.kind[col.have]:
            counts[k] += 1
        if todo and scheduler is None:
            n_workers = min(workers or os.cpu_count() or 1, len(todo))
            native_library()  # built here once, not by every worker; says so if it cannot be
            pool = WorkerPool(cfg, workers=n_workers, timeout=timeout,
                              batch_size=batch_size, start_method=start_method,
                              store_path=store.runs_path)
            pool.launch()  # the workers load the FMU while we set up the progress bar
            if out is not None and complevel and n_workers < (os.cpu_count() or 1):
                # a core is free while the workers simulate: each block of runs is compressed
                # as soon as it is complete (measured on msd_chain, 1 worker on 2 cores: 5.6 -> 4.9 to
                # 5.2 ms per run).  With a worker on every core it would only take their time
                # and the parent's answers (6.2 instead of 4.9 ms with 2 workers).  Started
                # after the workers are forked: the deflater runs a thread.  It also stores
                # the chunks in the file save_dataset completes at the end (msd_chain, 1200
                # runs of 1.6 MB: writing them had cost 0.5 to 3 ms per run after the last)
                deflater = ChunkDeflater(camp.n_runs, camp.time.shape[0], complevel)
                deflater.stream_into(part_path(out), lambda: camp._collected_dataset(col, cfg))
                col.deflate_with(deflater)
        bar = _progress_bar(progress, camp.n_runs, int(col.have.sum()), camp.info.name,
                            counts)

        def on_result(r: RunResult) -> None:
            try:
                if r.stored:  # appended by the worker
                    pass
                elif r.record is not None:  # encoded by the worker: append it as it is
                    store.append_record(r.record)
                else:
                    store.append(r.store_header(), r.data)
            except OSError as exc:
                raise _storage_error(exc, store_path / "runs.bin", store_path,
                                     int(col.have.sum())) from None
            col.add(r.index, r.failure_kind, r.message, r.wall_time, r.data)
            if bar is not None:
                if r.failure_kind:
                    counts[r.failure_kind] += 1
                    bar.set_postfix_str(_count_text(counts), refresh=False)
                bar.update(1)

        t_start, c_start = _time.perf_counter(), _time.process_time()
        t_sim, c_sim = t_start, c_start
        try:
            if pool is not None:
                with pool:  # an exception kills the workers, else they are stopped
                    pool.start()
                    t_sim, c_sim = _time.perf_counter(), _time.process_time()
                    pool.run(todo, on_result)
            elif todo:
                _run_dask(scheduler, cfg, todo, timeout, on_result, batch_size)
        finally:
            if bar is not None:
                bar.close()
        t_cons, c_cons = _time.perf_counter(), _time.process_time()
        if not col.have.all():  # pragma: no cover - every spec produces a result
            missing = int((~col.have).sum())
            raise FMUError(f"{missing} runs are missing from the store {store_path}; run the "
                           f"same command again to complete them.")
        ds = camp._collected_dataset(col, cfg)
        t_write, c_write = _time.perf_counter(), _time.process_time()
        m_write = _time.thread_time()
        if out is not None:
            try:
                save_dataset(ds, out, complevel=complevel, deflated=deflater,
                             before_replace=lambda: _unchanged(out, seen, store_path))
            except OSError as exc:
                raise _storage_error(exc, out, store_path, camp.n_runs) from None
        redo = int(np.isin(col.kind, list(RERUN_KINDS)).sum())
        if redo and out is not None:  # the store keeps them for the next run of the command
            notice = (f"{redo} run(s) were interrupted (their worker was stopped from outside, "
                      f"not by the FMU); {out} holds them as failed runs of kind 'interrupted' "
                      f"and {store_path} keeps every run: run the same command again to "
                      f"simulate them again.")
            camp.notes.append(notice)
            print(notice, file=sys.stderr)
            store.close()
        elif keep_store and out is not None:
            store.close()
        else:
            store.remove()
        t_end, c_end = _time.perf_counter(), _time.process_time()
        camp.timings = {"prepare": t_start - t_begin, "start": t_sim - t_start,
                        "simulate": t_cons - t_sim, "assemble": t_write - t_cons,
                        "write": t_end - t_write, "consolidate": t_end - t_cons,
                        "total": t_end - t_begin}
        camp.cpu_timings = {"prepare": c_start - c_begin, "start": c_sim - c_start,
                            "simulate": c_cons - c_sim, "assemble": c_write - c_cons,
                            "write": c_end - c_write, "consolidate": c_end - c_cons,
                            "total": c_end - c_begin,
                            "write_main_thread": _time.thread_time() - m_write}
    finally:
        if deflater is not None:
            deflater.close()
        if pool is not None:
            pool.terminate()  # no-op unless something failed before the pool ran
        store.close()
        if tmpdir is not None:
            tmpdir.cleanup()
    return ds


def _judge_output(out: Path, campaign_hash: str, overwrite: bool) -> bool:
    """Whether the existing file ``out`` is this campaign's dataset; raise when it is another
    file and ``overwrite`` is false."""
    old_hash = _dataset_hash(out)
    if old_hash == campaign_hash:
        return True
    if not overwrite:
        what = ("a dataset of a different campaign" if old_hash else
                "a file that is not a dataset of this campaign")
        raise StoreMismatchError(
            f"{out} already exists and holds {what}; use another output path, or "
            f"--overwrite (overwrite=True) to replace it.")
    return False


def _complete(camp: CampaignPlan, out: Path, progress: bool, t_begin: float) -> xr.Dataset:
    """The dataset of a campaign that is already complete at ``out``."""
    from fmu_surrogate.fmu.dataset import load_dataset

    _say(progress, f"{out}: this campaign is already complete; loaded it.")
    ds = load_dataset(out)
    t = _time.perf_counter() - t_begin
    camp.timings = {"prepare": t, "start": 0.0, "simulate": 0.0, "assemble": 0.0, "write": 0.0,
                    "consolidate": 0.0, "total": t}
    return ds


def _file_state(path: Path) -> tuple[int, int, int, int] | None:
    """What identifies the file at ``path`` and its content (``None``: there is none)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _unchanged(out: Path, seen: tuple[int, int, int, int] | None, store_path: Path) -> None:
    """Refuse to replace ``out`` when it is not the file that was checked under the lock."""
    if _file_state(out) == seen:
        return
    now = "was created" if seen is None else ("was removed" if not out.exists() else
                                              "was replaced or changed")
    raise StoreMismatchError(
        f"{out} {now} by another process while this harvest ran, so it is not replaced; every "
        f"run of this harvest is kept in {store_path}: run the same command with --overwrite "
        f"(overwrite=True) to replace {out}, or move it away first.")


def damage_notice(store: RunStore, col: _Collector, todo: list) -> str:
    """One line on what damage in the run store cost, or ``''`` when the store had none.

    Counts the runs that are simulated again because their record was damaged (a damaged
    record of a run that has an intact record too costs nothing) and names them.

    Parameters
    ----------
    store : RunStore
        The store after :meth:`RunStore.read`.
    col : _Collector
        The runs kept from the store.
    todo : list of RunSpec
        The runs that will be simulated.

    Returns
    -------
    str
    """
    dropped = store.discarded_text()
    if not dropped:
        return ""
    d = store.discarded
    known = store.damaged_indices
    lost = sorted({i for i in known if i is not None and 0 <= i < len(col.have)
                   and not col.have[i]})
    unknown = sum(i is None for i in known)

    def listed(runs: list[int]) -> str:
        return (" (" + ", ".join(str(i) for i in runs[:10]) + (", ..." if len(runs) > 10 else "")
                + ")") if runs else ""

    text = f"{store.path}: {dropped}; kept {int(col.have.sum())} intact run(s); "
    if unknown or d.get("foreign") or d.get("invalid"):  # which runs they were is not known
        missing = [s.index for s in todo]
        text += (f"the {len(missing)} run(s) missing from the store will be simulated again"
                 f"{listed(missing)}.")
    else:
        text += (f"{len(lost)} run(s) lost with them will be simulated again{listed(lost)}; "
                 f"{len(todo)} run(s) to simulate in all.")
    return text


def _check_options(backend: str, workers: int | None, timeout: float | None, complevel: int,
                   start_method: str) -> None:
    from fmu_surrogate.fmu.backends.registry import get_backend  # validates the backend name

    if backend not in ("auto", "fmpy"):
        get_backend(backend).close()
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ExperimentError(f"workers must be a positive integer, got {workers!r}.")
    if timeout is not None and not timeout > 0:
        raise ExperimentError(f"timeout must be > 0 seconds (or None), got {timeout!r}.")
    if isinstance(complevel, bool) or not isinstance(complevel, int) \
            or not 0 <= complevel <= 9:
        raise ExperimentError(f"complevel must be an integer 0 (no compression) ... 9, got "
                              f"{complevel!r}.")
    if start_method not in ("auto", "fork", "spawn"):
        raise ExperimentError(f"start_method must be 'auto', 'fork' or 'spawn', got "
                              f"{start_method!r}.")


class _Collector:
    """The campaign's output arrays, filled as runs finish (and with resumed runs).

    ``buf[c, i, :]`` is column ``c`` of run ``i`` (NaN after the run's end): every (run, time)
    variable of the dataset is one contiguous ``buf[c]``, so assembling the dataset copies
    nothing and costs no per-run work.
    """

    def __init__(self, n_runs: int, n_time: int, n_columns: int) -> None:
        # not filled: every run is added before the dataset is made (``have``), NaN tails then
        self.buf = _small_pages((n_columns, n_runs, n_time))
        self.deflater: ChunkDeflater | None = None
        self.kind = np.full(n_runs, "", dtype=object)
        self.message = np.full(n_runs, "", dtype=object)
        self.n = np.zeros(n_runs, dtype=np.int64)
        self.wall = np.full(n_runs, np.nan)
        self.have = np.zeros(n_runs, dtype=bool)

    def add(self, index: int, kind: str, message: str, wall: float, data: np.ndarray) -> None:
        """Run ``index`` produced ``data`` (shape (n, n_columns))."""
        n = data.shape[0]
        self.buf[:, index, :n] = data.T
        if n < self.buf.shape[2]:
            self.buf[:, index, n:] = np.nan
        self.kind[index] = kind
        self.message[index] = message
        self.n[index] = n
        self.wall[index] = wall
        self.have[index] = True
        if self.deflater is not None:
            self._deflate_block(index - index % self.deflater.rows)

    def deflate_with(self, deflater: ChunkDeflater) -> None:
        """From now on, hand each complete block of runs to ``deflater`` (those complete now
        too)."""
        self.deflater = deflater
        for r0 in range(0, self.have.size, deflater.rows):
            self._deflate_block(r0)

    def _deflate_block(self, r0: int) -> None:
        if self.have[r0:r0 + self.deflater.rows].all():
            for column in self.buf:
                self.deflater.submit(column, r0)


def _small_pages(shape: tuple[int, ...]) -> np.ndarray:
    """``np.empty(shape)`` (float64) in memory that is not advised to use transparent huge pages.

    numpy advises huge pages for large arrays; where the kernel then compacts memory to find
    them (a busy machine), the first write to each 2 MB of the collector cost several
    milliseconds per run of a large model, instead of a steady fraction of one with 4 kB pages.
    """
    n = int(np.prod(shape))
    try:
        import mmap

        buf = mmap.mmap(-1, max(8 * n, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return np.empty(shape)
    return np.frombuffer(buf, dtype=np.float64, count=n).reshape(shape)


class StorageError(FMUError, OSError):
    """Writing the store or the dataset failed (disk full, quota, permissions); nothing finished
    is lost and the same command resumes."""

    def __str__(self) -> str:
        return str(self.strerror)


def _storage_error(exc: OSError, file: Path, store_path: Path, n_kept: int) -> StorageError:
    import errno

    what = {errno.ENOSPC: "no space left on the device",
            errno.EDQUOT: "the disk quota is exceeded",
            errno.EACCES: "permission denied"}.get(exc.errno, exc.strerror or str(exc))
    return StorageError(exc.errno or 0, f"{what} while writing {file}; the {n_kept} finished runs "
                        f"are kept in {store_path}: free space (or fix the permissions) and run "
                        f"the same command again to resume.")


def _dataset_hash(path: Path) -> str | None:
    try:
        import h5py

        with h5py.File(path, "r") as f:
            v = f.attrs.get("campaign_hash")
    except Exception:  # noqa: BLE001 - not a NetCDF-4 file: not ours
        return None
    if isinstance(v, bytes):
        v = v.decode()
    return None if v is None else str(v)


def _count_text(counts: Counter) -> str:
    failed = {k: v for k, v in counts.items() if k}
    return ", ".join(f"{k}: {v}" for k, v in sorted(failed.items()))


def _progress_bar(progress: bool, total: int, initial: int, name: str, counts: Counter):
    if not progress:
        return None
    from tqdm.auto import tqdm

    class _Bar(tqdm):  # no monitor thread: workers are forked from a single-threaded process
        monitor_interval = 0

    bar = _Bar(total=total, initial=initial, desc=f"harvest {name}", unit="run",
               mininterval=0.5, file=sys.stderr)
    if _count_text(counts):
        bar.set_postfix_str(_count_text(counts), refresh=False)
    return bar


def _say(progress: bool, text: str) -> None:
    if progress:
        print(text, file=sys.stderr)
