"""Tests of :mod:`fmu_surrogate.identify.linear.estimator` and :mod:`fmu_surrogate.identify.linear.optim.rcg`.

Reference data are computed here, independently of the fitting code, as the exact response of the
continuous system to the piecewise-linear interpolant of the sampled input (Van Loan block
exponential with ``scipy.linalg.expm``; the reproduction script cross-checks this construction
against ``solve_ivp`` to 1e-12).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.signal as scs

from fmu_surrogate.benchmarks.msd_chain import msd_chain
from fmu_surrogate.identify.base import NotFittedError
from fmu_surrogate.identify.linear.estimator import (
    LinearPHFit,
    LinearPHIdentifier,
    paper_initial_guess,
)
from fmu_surrogate.identify.linear.model.experiments import Experiment
from fmu_surrogate.identify.linear.optim.rcg import ArmijoLineSearch, RestartedConjugateGradient
from fmu_surrogate.ph import LinearPH, StructureError

EPS = np.finfo(float).eps
ROOT = Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------------------ fixtures
def foh_response(p: dict, t: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Exact output for the linearly interpolated input (uniform grid)."""
    J, R, Q, B = p["J"], p["R"], p["Q"], p["B"]
    n, m = B.shape
    h = t[1] - t[0]
    M = np.zeros((n + 2 * m, n + 2 * m))
    M[:n, :n] = (J - R) @ Q * h
    M[:n, n : n + m] = B * h
    M[n : n + m, n + m :] = np.eye(m)
    E = sla.expm(M)
    Phi, Ga, Gb = E[:n, :n], E[:n, n : n + m], E[:n, n + m :]
    x = np.array(p.get("x0", np.zeros(n)), dtype=float)
    X = [x]
    for k in range(t.size - 1):
        x = Phi @ x + (Ga - Gb) @ u[k] + Gb @ u[k + 1]
        X.append(x)
    return np.array(X) @ (B.T @ Q).T


def u_train(t: np.ndarray) -> np.ndarray:
    return np.stack([scs.chirp(t, 3.0, 1.0, 20.0), np.sin(2 * np.pi * 3.0 * t)], axis=-1)


def true_system() -> dict:
    """The n = 5, m = 2 reference system of the reproduction script (authors' recipe, R PSD)."""
    rs = np.random.RandomState(10)
    n, m = 5, 2
    B = np.zeros((n, m))
    B[:m, :m] = np.diag([4.0, 2.0])
    B = B - 0.1 + 0.2 * rs.rand(n, m)
    U = np.triu(-0.1 + 0.1 * rs.rand(n, n), 1)
    A = -0.1 + 0.2 * rs.rand(n, n)
    A[:2, :] = 0.0
    return {
        "J": U - U.T,
        "R": A @ A.T,
        "Q": np.diag(np.arange(1.0, 6.0)),
        "B": B,
        "x0": np.zeros(n),
    }


@pytest.fixture(scope="module")
def data5():
    p = true_system()
    t = np.linspace(0.0, 1.0, 1001)
    u = u_train(t)
    return p, t, u, foh_response(p, t, u)


@pytest.fixture(scope="module")
def short_data():
    """A shorter experiment (T = 0.3) for the many small structure tests."""
    p = true_system()
    t = np.linspace(0.0, 0.3, 301)
    u = u_train(t)
    return p, t, u, foh_response(p, t, u)


def assert_ph_structure(est: LinearPHIdentifier) -> None:
    """The structure of a fitted model, asserted exactly where exactness is achievable."""
    s = est.system_
    assert isinstance(s, LinearPH)
    assert np.array_equal(s.J + s.J.T, np.zeros_like(s.J))  # ‖J + Jᵀ‖ == 0 bitwise
    assert np.array_equal(s.R, s.R.T)  # R assembled as ½(P + Pᵀ): bitwise symmetric
    assert np.array_equal(s.Q, s.Q.T)
    # R = YYᵀ is PSD in exact arithmetic; the computed eigenvalues of an exactly PSD matrix can
    # dip below zero by the backward error of eigvalsh, O(n ε ‖R‖₂) (plus the rounding of the
    # product, k ε ‖Y‖² = k ε ‖R‖₂): allow 10 n ε ‖R‖₂.
    lam_R = np.linalg.eigvalsh(s.R)
    n = s.n_states
    assert lam_R.min() >= -10 * n * EPS * max(lam_R.max(), 1e-300)
    assert np.linalg.eigvalsh(s.Q).min() > 0
    np.linalg.cholesky(s.Q)  # numerically SPD as well


# ----------------------------------------------------------------------- structure tests
@pytest.mark.parametrize("mode", ["exact", "euler"])
@pytest.mark.parametrize("rank_R", [None, 2])
@pytest.mark.parametrize(
    "fit", [("J", "R", "B"), ("J", "R", "Q", "B", "x0"), ("R",), ("Q",), ("J", "x0"), ("B",)]
)
def test_every_fitted_model_has_ph_structure(short_data, mode, rank_R, fit):
    _, t, u, y = short_data
    est = LinearPHIdentifier(5, learn=fit, rank_R=rank_R, mode=mode, max_iter=8, log_q=1e-3)
    assert est.fit((t, u, y)) is est
    assert_ph_structure(est)
    r = est.result_
    assert isinstance(r, LinearPHFit)
    assert (
        r.system is est.system_
        and r.mode == mode
        and r.fitted == tuple(k for k in ("J", "R", "Q", "B", "x0") if k in fit)
    )
    assert len(r.cost_history) == r.iterations + 1
    # descent: Armijo accepts only decreasing steps
    assert np.all(np.diff(r.cost_history) <= 0)
    assert r.final_cost < r.initial_cost
    if rank_R is not None and "R" in fit:
        assert np.linalg.matrix_rank(est.system_.R, tol=1e-10) <= rank_R


@pytest.mark.parametrize(
    "optimizer,line_search",
    [
        ("steepest", "armijo"),
        ("pymanopt_cg", "backtracking"),
        ("trust_regions", "armijo"),
        ("cg", "backtracking"),
    ],
)
def test_other_optimizers_keep_structure_and_decrease_cost(short_data, optimizer, line_search):
    _, t, u, y = short_data
    est = LinearPHIdentifier(
        5,
        learn=("J", "R", "Q", "B"),
        optimizer=optimizer,
        line_search=line_search,
        max_iter=6,
        log_q=1e-3,
    ).fit((t, u, y))
    assert_ph_structure(est)
    assert est.result_.final_cost < est.result_.initial_cost


# ------------------------------------------------------------------------ accuracy tests
@pytest.fixture(scope="module")
def converged_fits(data5):
    """J, R, B (Q = I fixed, the paper's setting) with trust regions in both discretisations."""
    _, t, u, y = data5
    out = {}
    for mode in ("exact", "euler"):
        out[mode] = LinearPHIdentifier(
            5,
            learn=("J", "R", "B"),
            Q=np.eye(5),
            mode=mode,
            optimizer="trust_regions",
            max_iter=100,
        ).fit((t, u, y))
    return out


def test_exact_mode_reaches_1e_4_on_noise_free_data(data5, converged_fits):
    _, t, u, y = data5
    est = converged_fits["exact"]
    assert_ph_structure(est)
    # Done-when criterion of the issue: max output error ≤ 1e-4 (measured ≈ 1e-5).
    assert np.max(np.abs(est.predict(t, u) - y)) <= 1e-4


def test_euler_mode_stops_at_its_discretisation_floor(data5, converged_fits):
    """Same optimiser and budget: the Euler model cannot match exact data below ~1e-2."""
    _, t, u, y = data5
    est = converged_fits["euler"]
    assert_ph_structure(est)
    err = np.max(np.abs(est.predict(t, u) - y))
    # The paper reports 1.01e-2 after 100 CG iterations; with the same budget of trust-region
    # iterations that brings the exact mode to ~1e-5 the Euler mode stays at the O(h) floor of
    # explicit Euler (measured ~1e-2 at h = 1e-3): the floor is between 1e-3 and 5e-2.
    assert 1e-3 < err < 5e-2
    assert err > 50 * np.max(np.abs(converged_fits["exact"].predict(t, u) - y))


def test_paper_algorithm_reproduces_paper_accuracy_in_euler_mode(data5):
    """Algorithm 1 as in the paper (CG, Armijo σ₀ = 1000, restart every 5, 100 iterations)."""
    _, t, u, y = data5
    est = LinearPHIdentifier(
        5, learn=("J", "R", "B"), Q=np.eye(5), mode="euler", max_iter=100, optimizer="cg",
        init="paper",
    ).fit((t, u, y))
    assert_ph_structure(est)
    err = np.max(np.abs(est.predict(t, u) - y))
    # paper: 7.06e-1 → 1.01e-2; ours measured 7.08e-1 → 1.2e-2.  Same order of magnitude.
    assert 3e-3 < err < 3e-2
    assert est.result_.iterations == 100


def test_msd_chain_model_reduction_n20(data5):
    """MSD chain (n_ref = 100) reduced to n = 20: ≤ 5 % relative max output error (paper 9.48 %)."""
    _, t, u, _ = data5
    s = msd_chain(50)
    y = foh_response({"J": s.J, "R": s.R, "Q": s.Q, "B": s.B}, t, u)
    est = LinearPHIdentifier(
        20, learn=("J", "R", "B"), Q=np.eye(20), mode="exact", max_iter=100
    ).fit((t, u, y))
    assert_ph_structure(est)
    rel = np.max(np.abs(est.predict(t, u) - y)) / np.max(np.abs(y))
    assert rel <= 0.05  # measured ≈ 2 %


def test_x0_only_fit_recovers_initial_state(short_data):
    p, t, u, _ = short_data
    x0 = 0.1 * np.arange(5.0)
    y = foh_response(dict(p, x0=x0), t, u)
    fixed = {k: p[k] for k in ("J", "R", "Q", "B")}
    est = LinearPHIdentifier(
        5, learn=("x0",), **fixed, optimizer="trust_regions", max_iter=20
    ).fit((t, u, y))
    # A linear least-squares problem in x0, observable through C e^{At}: trust regions solve it
    # to round-off; the observability of the slow states over T = 0.3 limits x0 to ~1e-8.
    assert np.max(np.abs(est.predict(t, u) - y)) < 1e-10
    np.testing.assert_allclose(est.x0_, x0, atol=1e-6)


def test_predict_matches_independent_reference_for_the_true_system(short_data):
    p, t, u, y = short_data
    fixed = {k: p[k] for k in ("J", "R", "Q", "B")}
    est = LinearPHIdentifier(5, learn=("x0",), **fixed, max_iter=0).fit((t, u, y))
    # exact discretisation vs an independent expm construction: round-off level
    np.testing.assert_allclose(est.predict(t, u, mode="exact"), y, rtol=0, atol=1e-12)
    assert est.score(t, u, y, mode="exact") == pytest.approx(1.0, abs=1e-12)
    assert est.score(t, u, np.zeros_like(y), mode="exact") < 0.5


def test_several_experiments_on_different_grids(short_data):
    p, t, u, y = short_data
    t2 = np.linspace(0.0, 0.2, 151)
    u2 = np.stack([np.cos(7 * t2), np.sin(11 * t2)], axis=-1)
    y2 = foh_response(p, t2, u2)
    exps = [(t, u, y), Experiment.from_arrays(t2, u2, y2)]
    est = LinearPHIdentifier(5, learn=("J", "R", "B"), max_iter=10).fit(exps)
    assert_ph_structure(est)
    assert est.result_.final_cost < est.result_.initial_cost


# --------------------------------------------------------------------- fixed parameters
def test_fixed_parameters_stay_bitwise_fixed(short_data):
    p, t, u, y = short_data
    rng = np.random.default_rng(3)
    Qf = p["Q"] + 0.1 * np.ones((5, 5))
    Jf = np.triu(rng.uniform(-1, 1, (5, 5)), 1)
    Jf = Jf - Jf.T
    x0f = rng.normal(size=5)
    fixed = {"Q": Qf.copy(), "J": Jf.copy(), "x0": x0f.copy()}
    est = LinearPHIdentifier(5, learn=("R", "B"), **fixed, max_iter=10).fit((t, u, y))
    s = est.system_
    assert np.array_equal(s.Q, Qf) and np.array_equal(s.J, Jf) and np.array_equal(est.x0_, x0f)
    # fitted ones moved
    init = paper_initial_guess(5, 2, 0)
    assert not np.array_equal(s.B, init["B"])
    # the caller's arrays are not aliased
    fixed["Q"][0, 0] = 99.0
    assert s.Q[0, 0] == Qf[0, 0]
    # defaults of non-fitted parameters are the paper's initial guess, bitwise
    est2 = LinearPHIdentifier(5, learn=("J",), max_iter=3).fit((t, u, y))
    for k in ("R", "Q", "B"):
        assert np.array_equal(getattr(est2.system_, k), init[k])
    assert np.array_equal(est2.x0_, init["x0"])


def test_fixed_rank_r(short_data):
    _, t, u, y = short_data
    est = LinearPHIdentifier(5, learn=("J", "R", "B"), rank_R=1, max_iter=10).fit((t, u, y))
    assert_ph_structure(est)
    assert np.linalg.matrix_rank(est.system_.R, tol=1e-12 * np.linalg.norm(est.system_.R)) == 1


def test_regularisation_towards_reference_pulls_b(short_data):
    _, t, u, y = short_data
    ref = {"B": np.zeros((5, 2))}
    free = LinearPHIdentifier(5, learn=("B",), max_iter=15).fit((t, u, y))
    pulled = LinearPHIdentifier(5, learn=("B",), max_iter=15, reg_lambda=10.0, reference=ref).fit(
        (t, u, y)
    )
    assert np.linalg.norm(pulled.system_.B) < np.linalg.norm(free.system_.B)


# -------------------------------------------------------------------------- bad input
def test_bad_input_gets_clear_errors(short_data):
    _, t, u, y = short_data
    est = LinearPHIdentifier(5, max_iter=1)
    with pytest.raises(ValueError, match="K = len"):
        est.fit((t, u[:-1], y))
    with pytest.raises(ValueError, match="as many outputs as inputs"):
        est.fit((t, u, y[:, :1]))
    bad = u.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or Inf.*row 7"):
        est.fit((t, bad, y))
    with pytest.raises(ValueError, match="NaN"):
        est.fit((t, u, np.where(np.arange(len(t))[:, None] == 3, np.inf, y)))
    tb = t.copy()
    tb[10] = tb[9]
    with pytest.raises(ValueError, match="strictly increasing"):
        est.fit((tb, u, y))
    with pytest.raises(ValueError, match="strictly increasing"):
        est.fit((t[::-1], u, y))
    with pytest.raises(ValueError, match="empty"):
        est.fit([])
    with pytest.raises(TypeError):
        est.fit(42)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"Q": -np.eye(5)}, StructureError, "positive definite"),
        ({"Q": np.diag([1.0, 1, 1, 1, 0])}, StructureError, "positive definite"),
        (
            {"learn": ("J", "R", "B", "Q"), "Q": np.eye(5) + np.triu(np.ones((5, 5)), 1)},
            StructureError,
            "symmetric",
        ),
        ({"learn": ("R", "B"), "J": np.ones((5, 5))}, StructureError, "skew"),
        ({"learn": ("J", "B"), "R": -np.eye(5)}, StructureError, "semidefinite"),
        ({"learn": ("J", "Q")}, None, None),
        ({"learn": ("J", "K")}, ValueError, "unknown parameter"),
        ({"learn": ()}, ValueError, "empty"),
        ({"learn": ("B",), "B": np.zeros((4, 2))}, ValueError, "shape"),
        ({"Q": np.full((5, 5), np.nan)}, ValueError, "NaN"),
        ({"mode": "rk4"}, ValueError, "mode"),
        ({"optimizer": "adam"}, ValueError, "optimizer"),
        ({"rank_R": 6}, ValueError, "rank_R"),
        ({"reg_lambda": 1.0}, ValueError, "reference"),
    ],
)
def test_bad_settings(short_data, kwargs, exc, match):
    _, t, u, y = short_data
    est = LinearPHIdentifier(5, max_iter=1, **kwargs)
    if exc is None:
        est.fit((t, u, y))
        return
    with pytest.raises(exc, match=match):
        est.fit((t, u, y))


@pytest.mark.parametrize("n", [-3, 2.5, True])
def test_model_order_must_be_positive_integer(short_data, n):
    _, t, u, y = short_data
    with pytest.raises(ValueError, match="order must be None"):
        LinearPHIdentifier(n).fit((t, u, y))


def test_not_fitted_and_predict_validation(short_data):
    _, t, u, y = short_data
    with pytest.raises(NotFittedError, match="not fitted"):
        LinearPHIdentifier(5).predict(t, u)
    est = LinearPHIdentifier(5, max_iter=1).fit((t, u, y))
    with pytest.raises(ValueError, match="columns"):
        est.predict(t, u[:, :1])
    with pytest.raises(ValueError, match="strictly increasing"):
        est.predict(t[::-1], u)
    assert est.predict(t, u).shape == y.shape


# ----------------------------------------------------------------- sklearn conventions
def test_scikit_learn_conventions(short_data):
    from sklearn.base import clone

    est = LinearPHIdentifier(4, learn=("J", "B"), mode="euler", max_iter=3)
    params = est.get_params()
    assert params["learn"] == ("J", "B") and params["order"] == 4 and params["mode"] == "euler"
    assert not any(k.endswith("_") for k in vars(est))  # constructor stores settings only
    c = clone(est)
    assert c.get_params() == params and c is not est
    est.set_params(max_iter=2, learn=("B",))
    assert est.learn == ("B",) and est.max_iter == 2
    with pytest.raises(ValueError, match="Invalid parameter"):
        est.set_params(bogus=1)
    _, t, u, y = short_data
    est.fit((t, u, y))
    assert hasattr(est, "system_") and hasattr(est, "x0_") and hasattr(est, "result_")


def test_fit_dataset_reads_runs(short_data):
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    p, t, u, y = short_data
    u2 = 0.5 * u[::-1].copy()
    y2 = foh_response(p, t, u2)
    recs = [
        RunRecord(index=0, values={"F1": u[:, 0], "F2": u[:, 1], "v1": y[:, 0], "v2": y[:, 1]}),
        RunRecord(index=1, values={"F1": u2[:, 0], "F2": u2[:, 1], "v1": y2[:, 0], "v2": y2[:, 1]}),
    ]
    ds = records_to_dataset(recs, t, None, ["F1", "F2", "v1", "v2"])
    a = LinearPHIdentifier(5, max_iter=4).fit_dataset(ds, inputs=["F1", "F2"], outputs=["v1", "v2"])
    b = LinearPHIdentifier(5, max_iter=4).fit([(t, u, y), (t, u2, y2)])
    np.testing.assert_array_equal(a.system_.B, b.system_.B)
    c = LinearPHIdentifier(5, max_iter=4).fit_dataset(ds, inputs=["F1", "F2"], outputs=["v1", "v2"], runs=[0])
    d = LinearPHIdentifier(5, max_iter=4).fit((t, u, y))
    np.testing.assert_array_equal(c.system_.J, d.system_.J)
    # fewer outputs than inputs and no units: no power pair, both forces modulating
    e = LinearPHIdentifier(5, max_iter=2).fit_dataset(ds, inputs=["F1", "F2"], outputs=["v1"])
    assert e.roles_.pairs == () and e.roles_.modulating == (0, 1)


# ------------------------------------------------------------------------ optimiser unit
def test_armijo_first_trial_and_halving():
    from pymanopt.manifolds import Euclidean

    M = Euclidean(2)
    x = np.array([1.0, -2.0])
    f = lambda z: 0.5 * float(z @ z)
    ls = ArmijoLineSearch(initial_step=1000.0, sufficient_decrease=1e-4)
    step, newx = ls.search(f, M, x, -x, f(x), -float(x @ x))
    # f(x − σx) ≤ f(x) − c σ |x|²  ⇔  σ ≤ 2 − 2c: the first of 1000·2⁻ᵏ below 1.9998 is k = 9
    assert ls.last_sigma == 1000.0 / 2**9 and ls.last_evaluations == 10
    np.testing.assert_allclose(newx, x * (1 - 1000.0 / 512))
    # no decrease possible along an ascent direction: the step is rejected
    step, same = ls.search(f, M, x, x, f(x), float(x @ x))
    assert step == 0.0 and same is x


def test_restart_every_one_is_steepest_descent():
    import pymanopt
    from pymanopt.manifolds import Euclidean

    M = Euclidean(3)
    D = np.diag([1.0, 10.0, 100.0])

    @pymanopt.function.numpy(M)
    def cost(x):
        return 0.5 * float(x @ D @ x)

    @pymanopt.function.numpy(M)
    def grad(x):
        return D @ x

    prob = pymanopt.Problem(M, cost, euclidean_gradient=grad)
    x0 = np.array([1.0, 1.0, 1.0])
    sd = RestartedConjugateGradient(
        restart_every=1, max_iterations=6, line_searcher=ArmijoLineSearch(initial_step=1.0)
    )
    r_sd = sd.run(prob, initial_point=x0)
    # manual steepest descent with the same line search
    x = x0.copy()
    ls = ArmijoLineSearch(initial_step=1.0)
    for _ in range(6):
        g = D @ x
        _, x = ls.search(
            lambda z: 0.5 * float(z @ D @ z), M, x, -g, 0.5 * float(x @ D @ x), -float(g @ g)
        )
    np.testing.assert_array_equal(r_sd.point, x)
    cg = RestartedConjugateGradient(
        restart_every=5, max_iterations=6, line_searcher=ArmijoLineSearch(initial_step=1.0)
    )
    r_cg = cg.run(prob, initial_point=x0)
    assert not np.array_equal(r_cg.point, x)  # CG directions differ from steepest descent
    assert len(r_cg.log["cost_history"]) == 7


# ------------------------------------------------------------------ reproduction script
def test_reproduction_script_quick(tmp_path):
    out = tmp_path / "res.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "reproduce_adjoint_ph.py"),
            "--quick",
            "--json",
            str(out),
            "--out",
            str(tmp_path / "figs"),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "MPLBACKEND": "Agg",
            "PYTHONPATH": str(ROOT),  # the package of this checkout
        },
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())
    syn, msd = res["synthetic"], res["msd"]
    # reference data: the interpolated-input solution is within the O(h²) interpolation error of
    # the continuous-input solution (measured 1.7e-4 at h = 1e-3)
    assert syn["reference_check"]["max_abs_interp_input_vs_continuous_input"] < 1e-3
    for study in ("jrb", "jrqb", "x0"):
        for r in syn[study].values():
            assert r["structure"]["skew_J_max_abs"] == 0.0
            assert r["structure"]["min_eig_Q"] > 0
            assert r["structure"]["min_eig_R"] >= -1e-12
            assert r["cost_last"] < r["cost_first"]
            assert np.isfinite(r["cv_l2"]) and np.isfinite(r["cv_max"])
    # the paper's starting point: max error ≈ 0.71 (paper 0.706)
    assert 0.5 < syn["jrb"]["exact"]["max_err_first"] < 1.0
    # quick budget (30 iterations): exact + trust regions already far below the Euler fits
    assert syn["jrb"]["exact_tr"]["max_err_last"] < 5e-3
    assert syn["jrb"]["euler"]["max_err_last"] < 5e-2
    assert msd["n"] == [20] and msd["exact"][0]["rel_err_after_pct"] < 10.0
    assert res["paper"]["msd"]["rel_err_after_pct"][0] == 9.48
    # noise study: σ = 0.05, two realisations, the default estimator (measured median 5.9e-3,
    # values 3.6e-3 and 8.2e-3; paper's single realisation 3.66e-3)
    ns = res["noise_study"]["sigma"]["0.05"]["lm"]
    assert res["noise_study"]["seeds"] == 2 and len(ns["max_err_last"]["values"]) == 2
    assert ns["max_err_last"]["min"] <= ns["max_err_last"]["median"] < 1.5e-2
    for f in res["figures"]:
        assert Path(f).stat().st_size > 1000


def test_bench_script_quick(tmp_path):
    """The benchmark runs and reports its figures (no timing assertions: speed is not tested)."""
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_adjoint.py"), "--quick", "--json", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),  # the package of this checkout
        },
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert sorted({(r["n"], r["mode"]) for r in rows}) == sorted(
        (n, m) for n in (5, 20, 100) for m in ("euler", "exact")
    )
    for r in rows:
        assert r["s_per_gradient"] > 0 and r["s_per_iteration"] > 0
        assert r["cost_last"] < r["cost_first"]
        if r["n"] in (5, 20):
            assert r["speedup_per_iteration"] > 0
            # the loop backend runs the same algorithm: same iterates up to round-off
            assert r["same_trajectory_max_rel_cost_diff"] < 1e-6
    # time to accuracy: the default reaches 1e-6 relative training error on both problems
    tta = json.loads(out.read_text())["time_to_accuracy"]
    lm = [r for r in tta if r["method"] == "lm (default)"]
    assert len(lm) == 2 and all(r["1e-06"] is not None for r in lm)  # measured 0.05 s each


# ----------------------------------------------------------------- fast optimisation path
def test_fast_product_operations_equal_pymanopts_bitwise():
    # The inlined operations on flat components give exactly pymanopt's results; SPD and
    # PSDFixedRank components are delegated.  Exact equality matters: J stays bitwise skew.
    from pymanopt.manifolds import (
        Euclidean,
        Product,
        PSDFixedRank,
        SkewSymmetric,
        SymmetricPositiveDefinite,
    )

    from fmu_surrogate.identify.linear.model.manifold import product_manifold as _Product

    rng = np.random.default_rng(5)
    n = 4
    parts = [SkewSymmetric(n), PSDFixedRank(n, 2), SymmetricPositiveDefinite(n), Euclidean(n, 2)]
    fast, ref = _Product(parts), Product(parts)
    x = [m.random_point() for m in parts]
    x2 = [m.random_point() for m in parts]
    eg = [rng.standard_normal(np.shape(v)) for v in x]
    g_fast = fast.euclidean_to_riemannian_gradient(x, eg)
    g_ref = ref.euclidean_to_riemannian_gradient(x, eg)
    d = -g_ref
    for a, b in zip(g_fast, g_ref):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fast.retraction(x, 0.3 * d), ref.retraction(x, 0.3 * d)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fast.transport(x, x2, d), ref.transport(x, x2, d)):
        np.testing.assert_array_equal(a, b)
    # inner product: the same sum, flat parts by one vdot each (rounding of the sum only)
    assert fast.inner_product(x, g_fast, d) == pytest.approx(ref.inner_product(x, g_ref, d), 1e-14)
    assert fast.norm(x, d) == pytest.approx(ref.norm(x, d), rel=1e-14)
    # tangent-vector arithmetic, also with numpy scalars on the left
    v = g_fast
    for a, b in zip(np.float64(2.0) * v - v / 2.0 + (-v), [0.5 * np.asarray(w) for w in v]):
        np.testing.assert_allclose(a, b, rtol=1e-15, atol=1e-15)


def test_loop_backend_runs_the_same_iterates(short_data, monkeypatch):
    # The bench baseline: the same optimiser on the per-time-step loop reference.  Costs along
    # the path agree to rounding amplified by the line search (measured ~1e-13; 1e-9).
    import types

    from fmu_surrogate.identify.linear import estimator as linear_ph
    from fmu_surrogate.identify.linear.model import adjoint, gradient_check

    _, t, u, y = short_data
    settings = {"learn": ("J", "R", "B"), "Q": np.eye(5), "max_iter": 3, "optimizer": "cg",
                "init": "paper"}
    for mode in ("exact", "euler"):
        fast = LinearPHIdentifier(5, mode=mode, **settings).fit((t, u, y)).result_
        shim = types.SimpleNamespace(**vars(adjoint))
        shim.Evaluator = gradient_check.LoopEvaluator
        monkeypatch.setattr(linear_ph, "_adjoint", lambda shim=shim: shim)
        loop = LinearPHIdentifier(5, mode=mode, **settings).fit((t, u, y)).result_
        monkeypatch.undo()
        assert loop.iterations == fast.iterations == 3
        np.testing.assert_allclose(loop.cost_history, fast.cost_history, rtol=1e-9)
        assert (loop.n_cost_evaluations, loop.n_gradient_evaluations) == (
            fast.n_cost_evaluations,
            fast.n_gradient_evaluations,
        )
        assert fast.cpu_time_s > 0 and fast.time_s > 0
