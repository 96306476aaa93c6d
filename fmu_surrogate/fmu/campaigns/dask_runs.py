"""Running a campaign's runs on a Dask cluster: batches of runs as Dask tasks, each executed in an
isolated worker process on the Dask worker (the FMU is sent along when the worker lacks it; a
target that is not an FMU file is opened from its path, see :mod:`fmu_surrogate.fmu.campaigns.targets`)."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from fmu_surrogate.fmu.errors import FMUError
from fmu_surrogate.fmu.runner.pool import RunnerConfig, RunResult, RunSpec, WorkerPool

_LOCAL_FMUS: dict[str, str] = {}


def _dask_batch(cfg: RunnerConfig, specs: list[RunSpec], timeout: float | None,
                fmu_bytes: bytes | None) -> list[RunResult]:
    """Dask task: run ``specs`` in an isolated subprocess on the Dask worker."""
    if cfg.backend_module:  # a target that is not an FMU file: opened from the same path
        if not os.path.exists(cfg.fmu_path):
            raise FMUError(f"{cfg.fmu_path} is not available on the Dask worker; targets that "
                           f"are not FMU files need a file system shared with the workers.")
    else:
        path = _local_fmu(cfg, fmu_bytes)
        if path != cfg.fmu_path:
            cfg = replace(cfg, fmu_path=path)
    results: list[RunResult] = []
    with WorkerPool(cfg, workers=1, timeout=timeout, batch_size=len(specs)) as pool:
        pool.run(specs, results.append)
    return results


def _local_fmu(cfg: RunnerConfig, fmu_bytes: bytes | None) -> str:
    """Path of the campaign's FMU on this Dask worker (written from ``fmu_bytes`` if missing)."""
    from fmu_surrogate.fmu.model.loading import file_sha256

    path = cfg.fmu_path
    sha = cfg.info.sha256
    if sha in _LOCAL_FMUS:
        path = _LOCAL_FMUS[sha]
    elif not (os.path.isfile(path) and file_sha256(path) == sha):
        if fmu_bytes is None:  # pragma: no cover - guarded by the caller
            raise FMUError(f"{path} is not available on the Dask worker.")
        d = Path(tempfile.gettempdir()) / "fmu-surrogate-fmus"
        d.mkdir(exist_ok=True)
        path = str(d / f"{sha}.fmu")
        if not os.path.isfile(path):
            tmp = f"{path}.{os.getpid()}.part"
            Path(tmp).write_bytes(fmu_bytes)
            os.replace(tmp, path)
    _LOCAL_FMUS[sha] = path
    return path


def _run_dask(scheduler: Any, cfg: RunnerConfig, specs: list[RunSpec], timeout: float | None,
              on_result: Callable[[RunResult], None], batch_size: int | None) -> None:
    try:
        from distributed import Client, KilledWorker, as_completed
    except ImportError:  # pragma: no cover - a dependency
        raise FMUError("scheduler= needs dask.distributed: pip install 'dask[distributed]'.") \
            from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler) if own else scheduler
    except OSError as exc:
        raise FMUError(f"cannot connect to the Dask scheduler {scheduler!r} ({exc}); check the "
                       f"address (tcp://HOST:8786) and that the scheduler is running.") from None
    try:
        n_threads = max(1, sum(client.nthreads().values()))
        bs = batch_size or max(1, math.ceil(len(specs) / (2 * n_threads)))
        batches = [specs[i:i + bs] for i in range(0, len(specs), bs)]
        blob = None if cfg.backend_module else client.scatter(Path(cfg.fmu_path).read_bytes(),
                                                              hash=False)
        cfg_f = client.scatter(cfg, hash=False)
        futures = {client.submit(_dask_batch, cfg_f, b, timeout, blob, pure=False): b
                   for b in batches}
        for fut in as_completed(list(futures)):
            try:
                results = fut.result()
            except KilledWorker as exc:  # the Dask workers running it died: lost, not failed
                results = [_lost(spec, cfg, exc) for spec in futures[fut]]
            for r in results:
                on_result(r)
    finally:
        if own:
            client.close()


def _lost(spec: RunSpec, cfg: RunnerConfig, exc: Exception) -> RunResult:
    """The result of a run whose Dask workers were lost (:class:`distributed.KilledWorker`)."""
    import time

    import numpy as np

    tries = getattr(exc, "allowed_failures", 0) + 1
    last = getattr(getattr(exc, "last_worker", None), "address", "?")
    message = (f"the Dask workers running this run were lost ({tries} tries, the last on "
               f"{last}): a worker died or left the cluster, not the FMU (it runs in a process "
               f"of its own); the run is recorded as interrupted and a resumed harvest "
               f"simulates it again")
    now = time.time()
    return RunResult(spec.index, "interrupted", message, 0, np.empty((0, cfg.n_columns)),
                     float("nan"), now, now, 0)
