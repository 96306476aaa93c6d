#!/usr/bin/env python
"""Seconds per Adam step of the transformed multi-task GP: our Kronecker path vs the paper's.

For N ∈ {256, 512, 1024, 2048} training points and D ∈ {3, 5} tasks (= state dimension) this
times one optimiser step (negative log marginal likelihood + gradient + Adam update) of

(a) ``fmu_surrogate.identify.gp.effort.GPEffortIdentifier`` — our Kronecker-structured fast path,
    measured as the slope of the fit time over the number of Adam steps, and its total for 200
    steps;
(b) the paper's construction (zaspel-guenther §3.4), written here: a GPyTorch ``ExactGP`` whose
    kernel subclasses ``MultitaskKernel`` and applies ``T = J − R`` densely in ``forward`` —
    ``covar = T_big @ K_multitask @ T_bigᵀ`` with ``T_big = I_N ⊗ T`` — with a
    ``MultitaskGaussianLikelihood`` (task noises), float64, Adam, exact Cholesky solves.

(b) is timed over a few steps only, and skipped where its extrapolated step time exceeds
``--max-paper-step`` seconds (the extrapolation from the largest run size assumes the
``O((ND)³)`` cost of its dense products and Cholesky factorisation; it is printed with the label
"extrapolated").  Where both run, the script also copies (a)'s hyperparameters into (b) and prints
the largest difference of their predictive means of the targets ``f = T z`` at 100 test points —
both compute the same exact GP, so this is round-off, amplified by the conditioning of
``K + Σ`` (printed: the smallest learned noise variance relative to the mean square target).

Benchmark problem: a random pH structure of size D (``J = A − Aᵀ``, ``R = L Lᵀ`` with rank
``⌈D/2⌉``), states uniform in ``[−1, 1]^D``, effort ``z_a(x) = sin(w_aᵀx) + 0.5 cos(v_aᵀx)``,
targets ``y = T z(x) + 1e-3 ε``; ``E = I``, no inputs.

Threads: ``--threads`` (default 1: the machine is shared); both variants get the same number.
GPyTorch's default would switch from Cholesky to preconditioned CG above 800 rows
(``max_cholesky_size``); we force Cholesky so that (b) computes the exact marginal likelihood the
paper describes and (a) and (b) are comparable.

Usage::

    python scripts/bench_gp.py [--quick] [--json PATH] [--threads 1] [--max-paper-step 150]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

N_FULL = (256, 512, 1024, 2048)
D_FULL = (3, 5)
N_QUICK = (64, 128)
D_QUICK = (3,)
PAPER_NOISE_FLOOR = 1e-8


# --------------------------------------------------------------------------- problem
@dataclass
class Problem:
    """A random pH benchmark problem: ``Y = (J − R) z(X)ᵀ + noise``."""

    X: np.ndarray  # (N, D)
    Y: np.ndarray  # (N, D)
    J: np.ndarray  # (D, D) skew
    R: np.ndarray  # (D, D) PSD
    X_test: np.ndarray  # (M, D)

    @property
    def T(self) -> np.ndarray:
        return self.J - self.R


def make_problem(N: int, D: int, seed: int = 0, n_test: int = 100, noise: float = 1e-3) -> Problem:
    """Random pH structure of size D and targets from a smooth effort (see module docstring)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((D, D))
    J = A - A.T
    L = rng.standard_normal((D, math.ceil(D / 2)))
    R = 0.5 * L @ L.T
    W = rng.standard_normal((D, D))
    V = rng.standard_normal((D, D))

    def effort(x: np.ndarray) -> np.ndarray:
        return np.sin(x @ W.T) + 0.5 * np.cos(x @ V.T)

    X = rng.uniform(-1.0, 1.0, (N, D))
    Y = effort(X) @ (J - R).T + noise * rng.standard_normal((N, D))
    X_test = rng.uniform(-1.0, 1.0, (n_test, D))
    return Problem(X, Y, J, R, X_test)


# --------------------------------------------------------------------------- (b) the paper's construction
def paper_classes():
    """The paper's GPyTorch classes (imported lazily so that ``--help`` is fast)."""
    import gpytorch
    import torch

    class TransformedMultitaskKernel(gpytorch.kernels.MultitaskKernel):
        """``MultitaskKernel`` whose ``forward`` applies ``T`` densely: ``(I ⊗ T) K (I ⊗ T)ᵀ``.

        The parent returns ``k(X1, X2) ⊗ K_T`` in GPyTorch's interleaved ordering (row
        ``i·D + a`` is point i, task a), so the block-diagonal ``I_N ⊗ T`` acts per point.
        """

        def __init__(self, T: torch.Tensor, data_covar_module, num_tasks: int, rank: int = 1):
            super().__init__(data_covar_module, num_tasks=num_tasks, rank=rank)
            self.register_buffer("T", T)

        def forward(self, x1, x2, diag=False, last_dim_is_batch=False, **params):
            K = super().forward(x1, x2, **params).to_dense()
            T1 = torch.kron(torch.eye(x1.shape[-2], dtype=K.dtype), self.T)
            T2 = torch.kron(torch.eye(x2.shape[-2], dtype=K.dtype), self.T)
            covar = T1 @ K @ T2.transpose(-1, -2)
            return covar.diagonal(dim1=-2, dim2=-1) if diag else covar

    class PaperGP(gpytorch.models.ExactGP):
        """ExactGP on the targets ``f = T z`` with the transformed kernel and zero mean."""

        def __init__(self, X, Y, likelihood, T, rank: int = 1, ard: bool = False):
            super().__init__(X, Y, likelihood)
            D = Y.shape[-1]
            self.mean_module = gpytorch.means.MultitaskMean(gpytorch.means.ZeroMean(), num_tasks=D)
            data = gpytorch.kernels.RBFKernel(ard_num_dims=X.shape[-1] if ard else None)
            self.covar_module = TransformedMultitaskKernel(T, data, num_tasks=D, rank=rank)

        def forward(self, x):
            return gpytorch.distributions.MultitaskMultivariateNormal(
                self.mean_module(x), self.covar_module(x)
            )

    return TransformedMultitaskKernel, PaperGP


def build_paper_model(problem: Problem, rank: int = 1, ard: bool = False, seed: int = 0):
    """The paper's model and likelihood on ``problem`` (float64, train mode)."""
    import gpytorch
    import torch

    torch.manual_seed(seed)
    _, PaperGP = paper_classes()
    X = torch.as_tensor(problem.X, dtype=torch.float64)
    Y = torch.as_tensor(problem.Y, dtype=torch.float64)
    T = torch.as_tensor(problem.T, dtype=torch.float64)
    D = Y.shape[1]
    likelihood = gpytorch.likelihoods.MultitaskGaussianLikelihood(
        num_tasks=D,
        has_global_noise=False,
        noise_constraint=gpytorch.constraints.GreaterThan(PAPER_NOISE_FLOOR),
    ).double()
    model = PaperGP(X, Y, likelihood, T, rank=rank, ard=ard).double()
    model.train()
    likelihood.train()
    return model, likelihood


def paper_mll(model, likelihood):
    """GPyTorch's exact marginal log likelihood object of the paper's model."""
    import gpytorch

    return gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)


def paper_loss(model, likelihood):
    """Negative log marginal likelihood (total, not divided by N·D) with exact Cholesky solves."""
    import gpytorch

    model.train()
    likelihood.train()
    with gpytorch.settings.max_cholesky_size(10**9):
        out = model(*model.train_inputs)
        # ExactMarginalLogLikelihood divides by the number of scalar targets; undo it
        n = model.train_targets.numel()
        return -paper_mll(model, likelihood)(out, model.train_targets) * n


def time_paper_steps(problem: Problem, steps: int, lr: float = 0.1, rank: int = 1) -> list[float]:
    """Wall seconds of each of ``steps`` Adam steps of the paper's model (loss + backward + step)."""
    import torch

    model, likelihood = build_paper_model(problem, rank=rank)
    params = list(model.parameters())  # the likelihood is a sub-module of the ExactGP
    opt = torch.optim.Adam(params, lr=lr)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = paper_loss(model, likelihood)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return times


def set_paper_hyperparameters(
    model, likelihood, lengthscale: np.ndarray, task_covariance: np.ndarray, noise: np.ndarray
) -> None:
    """Load hyperparameters into a paper model built with ``rank = D``.

    ``K_T = F Fᵀ + diag(v)``: we set ``F = chol(K_T − v I)`` with ``v = 1e-12·tr(K_T)/D`` (the
    IndexKernel's ``var`` must stay positive), which reproduces ``K_T`` to round-off.
    """
    import torch

    D = task_covariance.shape[0]
    tk = model.covar_module.task_covar_module
    if tk.covar_factor.shape[-1] != D:
        raise ValueError("build the paper model with rank = D to load a full task covariance.")
    v = 1e-12 * np.trace(task_covariance) / D
    F = np.linalg.cholesky(task_covariance - v * np.eye(D) + 0.0)
    ls = np.asarray(lengthscale, dtype=float).reshape(1, -1)
    data = model.covar_module.data_covar_module
    if data.lengthscale.shape[-1] != ls.shape[-1]:
        raise ValueError(
            f"length scale has {ls.shape[-1]} entries, the paper model {data.lengthscale.shape[-1]}."
        )
    with torch.no_grad():
        tk.covar_factor.copy_(torch.as_tensor(F))
        tk.var = torch.full((D,), v, dtype=torch.float64)
        data.lengthscale = torch.as_tensor(ls)
        likelihood.task_noises = torch.as_tensor(np.asarray(noise, dtype=float).reshape(D))


def paper_task_covariance(model) -> np.ndarray:
    """``K_T`` of a paper model, (D, D)."""
    return model.covar_module.task_covar_module.covar_matrix.to_dense().detach().numpy()


def paper_predict_mean(model, likelihood, X_test: np.ndarray) -> np.ndarray:
    """Predictive mean of the targets at ``X_test``; shape (M, D)."""
    import gpytorch
    import torch

    model.eval()
    likelihood.eval()
    with torch.no_grad(), gpytorch.settings.max_cholesky_size(10**9), \
            gpytorch.settings.skip_posterior_variances(True):
        out = model(torch.as_tensor(X_test, dtype=torch.float64))
        return out.mean.numpy()


# --------------------------------------------------------------------------- dense NumPy reference
def dense_reference(
    X: np.ndarray,
    Y: np.ndarray,
    T: np.ndarray,
    lengthscale: np.ndarray,
    task_covariance: np.ndarray,
    noise: np.ndarray,
    X_test: np.ndarray | None = None,
) -> tuple[float, np.ndarray | None]:
    """Log marginal likelihood and predictive mean of ``y = T z + ε`` by dense NumPy/SciPy.

    Independent of GPyTorch and of the Kronecker path: ``C = k(X, X) ⊗ T K_T Tᵀ + I ⊗ diag(noise)``
    in point-major order, Cholesky, ``log p = −½ yᵀC⁻¹y − ½ log det C − ½ ND log 2π``.
    """
    from scipy.linalg import cho_factor, cho_solve

    ls = np.asarray(lengthscale, dtype=float).reshape(-1)

    def k(A, B):
        d2 = (((A[:, None, :] - B[None, :, :]) / ls) ** 2).sum(-1)
        return np.exp(-0.5 * d2)

    N, D = Y.shape
    Bt = T @ task_covariance @ T.T
    C = np.kron(k(X, X), Bt) + np.kron(np.eye(N), np.diag(noise))
    cf = cho_factor(C, lower=True)
    y = Y.reshape(-1)
    alpha = cho_solve(cf, y)
    logdet = 2.0 * np.log(np.diag(cf[0])).sum()
    lml = -0.5 * y @ alpha - 0.5 * logdet - 0.5 * N * D * np.log(2 * np.pi)
    mean = None
    if X_test is not None:
        mean = (np.kron(k(X_test, X), Bt) @ alpha).reshape(len(X_test), D)
    return float(lml), mean


# --------------------------------------------------------------------------- (a) ours
def _ours_available() -> bool:
    try:
        from fmu_surrogate.identify.gp.effort import GPEffortIdentifier  # noqa: F401
    except ImportError:
        return False
    return True


def _fit_ours(problem: Problem, n_iter: int, seed: int = 0):
    from fmu_surrogate.identify.gp.effort import GPEffortIdentifier

    D = problem.X.shape[1]
    est = GPEffortIdentifier(
        E=np.eye(D), J=problem.J, R=problem.R, B=np.zeros((D, 1)), max_iter=n_iter, lr=0.1,
        seed=seed,
    )
    t0 = time.perf_counter()
    est.fit(problem.X, problem.Y, np.zeros((len(problem.X), 1)))
    return est, time.perf_counter() - t0


def time_ours(problem: Problem, s1: int, s2: int):
    """Per-step seconds from the slope between fits with ``s1`` and ``s2`` Adam steps.

    Returns ``(per_step, t_fit(s1), t_fit(s2), estimator fitted with s2 steps)``; the slope
    removes the fixed setup cost (targets, standardisation, final posterior).
    """
    _, t1 = _fit_ours(problem, s1)
    est, t2 = _fit_ours(problem, s2)
    return max((t2 - t1) / (s2 - s1), 0.0), t1, t2, est


def ours_hyperparameters(est) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lengthscale, K_T, task noises)`` of a fitted identifier, for the paper model."""
    D = est.task_covariance_.shape[0]
    noise = np.broadcast_to(np.asarray(est.noise_, dtype=float).reshape(-1), (D,)).copy()
    return np.asarray(est.lengthscale_, dtype=float).reshape(-1), est.task_covariance_, noise


# --------------------------------------------------------------------------- driver
@dataclass
class Row:
    N: int
    D: int
    ours_step_s: float | None = None
    ours_total_s: float | None = None
    ours_total_label: str = ""
    paper_step_s: float | None = None
    paper_label: str = ""
    ratio: float | None = None
    max_mean_diff: float | None = None
    noise_min_rel: float | None = None  # smallest learned noise variance / mean(Y²)
    notes: list[str] = field(default_factory=list)


def run(
    Ns, Ds, *, paper_steps: int, max_paper_step: float, ours_steps: tuple[int, int],
    total_steps: int, measure_total_up_to: float, progress: bool = True,
) -> list[Row]:
    """Run the benchmark grid and return one :class:`Row` per (N, D)."""
    from tqdm import tqdm

    have_ours = _ours_available()
    rows: list[Row] = []
    # the largest (N·D, seconds per step) of the paper model actually measured, for extrapolation
    paper_ref: tuple[int, float] | None = None
    if have_ours:  # warm-up: imports, allocator, torch dispatch caches (else the first slope is off)
        _fit_ours(make_problem(32, 3), 3)
    grid = [(N, D) for D in Ds for N in Ns]
    grid.sort(key=lambda p: p[0] * p[1])
    for N, D in tqdm(grid, desc="bench", disable=not progress):
        row = Row(N, D)
        prob = make_problem(N, D, seed=N + D)
        est = None
        if have_ours:
            per, t1, _, est = time_ours(prob, *ours_steps)
            row.ours_step_s = per
            predicted_total = t1 + per * (total_steps - ours_steps[0])
            if predicted_total <= measure_total_up_to:
                est, ttot = _fit_ours(prob, total_steps)
                row.ours_total_s, row.ours_total_label = ttot, "measured"
            else:
                row.ours_total_s, row.ours_total_label = predicted_total, "extrapolated"
            _, _, noise = ours_hyperparameters(est)
            row.noise_min_rel = float(noise.min() / np.mean(prob.Y**2))
        else:
            row.notes.append("GPEffortIdentifier not available: (a) not run")
        # paper's construction
        nd = N * D
        predicted = None if paper_ref is None else paper_ref[1] * (nd / paper_ref[0]) ** 3
        if predicted is not None and predicted > max_paper_step:
            row.paper_step_s = predicted
            row.paper_label = f"extrapolated (not run; O((ND)^3) from N·D={paper_ref[0]})"
        else:
            times = time_paper_steps(prob, paper_steps)
            # the first step pays one-off allocation; report the mean of the others when possible
            row.paper_step_s = float(np.mean(times[1:] if len(times) > 1 else times))
            row.paper_label = f"measured ({len(times)} steps)"
            paper_ref = (nd, row.paper_step_s)
            if est is not None:
                row.max_mean_diff = compare_means(prob, est)
                if row.ours_total_label == "extrapolated":
                    row.notes.append(
                        f"max|Δmean| at the hyperparameters after {ours_steps[1]} Adam steps"
                    )
        if row.ours_step_s:
            row.ratio = row.paper_step_s / row.ours_step_s
        rows.append(row)
    rows.sort(key=lambda r: (r.D, r.N))
    return rows


def compare_means(problem: Problem, est) -> float:
    """Max |mean_ours − mean_paper| of the target predictions at equal hyperparameters."""
    D = problem.X.shape[1]
    ls, KT, noise = ours_hyperparameters(est)
    model, lik = build_paper_model(problem, rank=D, ard=ls.size > 1)
    set_paper_hyperparameters(model, lik, ls, KT, noise)
    m_paper = paper_predict_mean(model, lik, problem.X_test)
    m_ours = np.asarray(est.predict_targets(problem.X_test))
    return float(np.abs(m_ours - m_paper).max())


def _fmt(x: float | None, spec: str = ".3g") -> str:
    return "—" if x is None else format(x, spec)


def print_table(rows: list[Row], total_steps: int = 200) -> None:
    head = f"ours {total_steps} steps"
    print(
        f"{'N':>5} {'D':>2} | {'ours s/step':>11} {head:>22} | "
        f"{'paper s/step':>12} {'':<48} | {'ratio':>8} | {'max|Δmean|':>10} | {'min σ²/<y²>':>11}"
    )
    for r in rows:
        tot = "—" if r.ours_total_s is None else f"{r.ours_total_s:.3g} s ({r.ours_total_label})"
        print(
            f"{r.N:>5} {r.D:>2} | {_fmt(r.ours_step_s):>11} {tot:>22} | "
            f"{_fmt(r.paper_step_s):>12} {r.paper_label:<48} | {_fmt(r.ratio, '.1f'):>8} | "
            f"{_fmt(r.max_mean_diff, '.2e'):>10} | {_fmt(r.noise_min_rel, '.1e'):>11}"
        )
        for n in r.notes:
            print(f"      note: {n}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny grid (N = 64, 128; D = 3) for tests")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--paper-steps", type=int, default=3, help="Adam steps timed for (b)")
    p.add_argument(
        "--max-paper-step", type=float, default=150.0,
        help="skip (b) where its extrapolated step exceeds this many seconds (default 150)",
    )
    p.add_argument(
        "--measure-total-up-to", type=float, default=300.0,
        help="measure ours' 200-step total where predicted below this (s); else extrapolate",
    )
    p.add_argument("--N", type=int, nargs="*", help="override the N grid")
    p.add_argument("--D", type=int, nargs="*", help="override the D grid")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    Ns = args.N or (N_QUICK if args.quick else N_FULL)
    Ds = args.D or (D_QUICK if args.quick else D_FULL)
    ours_steps = (2, 6) if args.quick else (5, 25)
    total = 20 if args.quick else 200
    rows = run(
        Ns, Ds, paper_steps=2 if args.quick else args.paper_steps,
        max_paper_step=args.max_paper_step, ours_steps=ours_steps, total_steps=total,
        measure_total_up_to=args.measure_total_up_to, progress=not args.no_progress,
    )
    print(f"\nseconds per Adam step (NLML + gradient + update), float64, {args.threads} thread(s)")
    print_table(rows, total)
    target = [r for r in rows if r.N == 1024 and r.D == 5]
    if target:
        r = target[0]
        print(
            f"\ntargets at N=1024, D=5: ratio {_fmt(r.ratio, '.1f')} (need ≥ 50), "
            f"ours 200 steps {_fmt(r.ours_total_s, '.1f')} s (need ≤ 60, {r.ours_total_label})"
        )
    if args.json:
        out = {
            "machine": {"platform": platform.platform(), "python": sys.version.split()[0],
                        "torch": torch.__version__, "threads": args.threads},
            "total_steps": total,
            "ours_step_method": f"slope of fit time between n_iter={ours_steps[0]} and {ours_steps[1]}",
            "rows": [asdict(r) for r in rows],
        }
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
