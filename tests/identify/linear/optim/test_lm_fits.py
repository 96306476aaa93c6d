"""Subspace initialisation, KYP pH form, forward sensitivities, Levenberg–Marquardt and the
zero-order hold of the linear pH identification (fmu_surrogate.identify)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.signal as scs

from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
from fmu_surrogate.identify.linear.init.passivity import passive_realisation, to_storage
from fmu_surrogate.identify.linear.init.subspace import subspace_identify
from fmu_surrogate.identify.linear.model.adjoint import Evaluator
from fmu_surrogate.identify.linear.model.discretisation import simulate
from fmu_surrogate.identify.linear.model.experiments import Experiment, hold_from_dataset
from fmu_surrogate.identify.linear.model.sensitivities import Coordinates, output_sensitivities
from fmu_surrogate.identify.linear.optim.lm import r_factor


def random_ph(seed: int, n: int, m: int) -> dict[str, np.ndarray]:
    """Random pH system: R of rank n/2, Q well conditioned, slowest time constant > 2 s."""
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((n, n))
    F = rng.standard_normal((n, n // 2)) * 0.5
    G = rng.standard_normal((n, n))
    return {"J": U - U.T, "R": F @ F.T, "Q": G @ G.T / n + 0.3 * np.eye(n),
            "B": rng.standard_normal((n, m)), "x0": np.zeros(n)}


def multisine(seed: int, t: np.ndarray, m: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    f, ph = rng.uniform(0.2, 20.0, (m, 12)), rng.uniform(0.0, 6.0, (m, 12))
    return np.stack([np.sin(2 * np.pi * f[j][:, None] * t + ph[j][:, None]).sum(0)
                     for j in range(m)], axis=1)


def experiment(p, seed, hold="linear", K=1001, T=2.0):
    t = np.linspace(0.0, T, K)
    u = multisine(seed, t, p["B"].shape[1])
    return t, u, simulate(p, t, u, hold=hold)[1]


def assert_structure(est):
    s = est.system_
    assert np.array_equal(s.J, -s.J.T)
    assert np.array_equal(s.R, s.R.T) and np.linalg.eigvalsh(s.R).min() >= -1e-12 * max(
        1.0, np.abs(s.R).max())
    assert np.linalg.eigvalsh(s.Q).min() > 0


def test_zero_order_hold_matches_scipy_cont2discrete():
    # ZOH step x_{k+1} = e^{Ah} x_k + ∫e^{As}ds B u_k, against scipy's zoh discretisation
    p = random_ph(1, 4, 2)
    t = np.linspace(0.0, 1.0, 201)
    u = multisine(0, t, 2)
    A, C = (p["J"] - p["R"]) @ p["Q"], p["B"].T @ p["Q"]
    Ad, Bd, Cd, Dd, _ = scs.cont2discrete((A, p["B"], C, np.zeros((2, 2))), 0.005, "zoh")
    _, y_ref, _ = scs.dlsim((Ad, Bd, Cd, Dd, 0.005), u, t=t)
    y = simulate(p, t, u, hold="zoh")[1]
    assert np.abs(y - y_ref).max() <= 1e-12 * np.abs(y_ref).max()  # measured 2e-15
    y_lin = simulate(p, t, u, hold="linear")[1]
    assert np.abs(y_lin - y_ref).max() > 1e-4 * np.abs(y_ref).max()  # the holds differ


def test_hold_from_dataset_attribute():
    class DS:
        def __init__(self, text):
            self.attrs = {"input_interpolation": text} if text is not None else {}

    assert hold_from_dataset(DS("zero-order hold over each step")) == "zoh"
    assert hold_from_dataset(DS("linear between grid points (fmpy Input, model exchange)")) == \
        "linear"
    assert hold_from_dataset(DS(None)) == "linear"
    with pytest.raises(ValueError, match="hold must be one of"):
        Experiment.from_arrays([0.0, 1.0], [0.0, 1.0], [0.0, 1.0], hold="cubic")


@pytest.mark.parametrize(("mode", "hold"), [("exact", "linear"), ("exact", "zoh"),
                                            ("euler", "linear")])
def test_output_sensitivities_match_finite_differences(mode, hold):
    n, m = 4, 2
    p = random_ph(2, n, m)
    p["x0"] = 0.1 * np.arange(n)
    t, u, y = experiment(p, 0, hold, K=201, T=1.0)
    t2 = np.concatenate([t[:100], t[100:] + 0.003 * np.arange(101)])  # two step sizes
    exps = [Experiment.from_arrays(t, u, y, hold), Experiment.from_arrays(t2, u, y, hold)]
    names = ("J", "R", "Q", "B", "x0")
    ev = Evaluator(exps, mode=mode, wrt=names)
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((n, n))
    st = ev.forward(p["J"], Y @ Y.T, p["Q"], p["B"], p["x0"])
    co = Coordinates(names, n, m, n)
    xi = rng.standard_normal((2, co.size))
    d = co.tangent(xi)
    dy = output_sensitivities(ev, st, d, Y)  # batch of 2 directions
    dy1 = output_sensitivities(ev, st, co.tangent(xi[:1]), Y)  # one direction (scan path)
    eps = 1e-6

    def out(s):
        Ys = Y + s * d["R"][0]
        f = ev.forward(p["J"] + s * d["J"][0], Ys @ Ys.T, p["Q"] + s * d["Q"][0],
                       p["B"] + s * d["B"][0], p["x0"] + s * d["x0"][0])
        return [g.r for g in f.fwds]

    for e, (fp, fm) in enumerate(zip(out(eps), out(-eps))):
        fd = (fp - fm) / (2 * eps)
        assert np.abs(fd - dy[e][:, 0]).max() <= 1e-7 * np.abs(fd).max()  # measured 3e-10
        assert np.abs(dy1[e][:, 0] - dy[e][:, 0]).max() <= 1e-12 * np.abs(fd).max()


def test_passive_realisation_keeps_the_transfer_function():
    p = random_ph(3, 6, 2)
    A, B, C = (p["J"] - p["R"]) @ p["Q"], p["B"], p["B"].T @ p["Q"]
    T = np.random.default_rng(1).standard_normal((6, 6))  # an arbitrary state basis
    At, Bt, Ct = T @ A @ np.linalg.inv(T), T @ B, C @ np.linalg.inv(T)
    pm = to_storage(passive_realisation(At, Bt, Ct, np.zeros(6)), np.eye(6))
    assert np.array_equal(pm.J, -pm.J.T)
    assert np.linalg.eigvalsh(0.5 * (pm.R + pm.R.T)).min() >= -1e-10  # measured -1e-14
    assert pm.violation < 1e-8  # a passive model (measured 0)

    def G(J, R, Q, Bm, s):
        return Bm.T @ Q @ np.linalg.solve(s * np.eye(6) - (J - R) @ Q, Bm)

    for s in (0.1j, 1.0j, 3.0 + 2.0j):
        G0, G1 = G(p["J"], p["R"], p["Q"], p["B"], s), G(pm.J, pm.R, pm.Q, pm.B, s)
        # δ = 1e-8‖G‖ makes the Riccati storage O(√δ) from exact: measured 3e-5
        assert np.abs(G1 - G0).max() <= 1e-3 * np.abs(G0).max()


def test_subspace_recovers_an_exact_model_from_several_experiments():
    p = random_ph(4, 6, 3)
    exps = [experiment(p, s) + ("linear",) for s in range(2)]
    sm = subspace_identify(exps, 6)
    assert sm.rank == 6
    t, u, y = experiment(p, 9)
    n = sm.A.shape[0]
    E = sla.expm(np.block([[sm.A * (t[1] - t[0]), np.eye(n) * (t[1] - t[0]), np.zeros((n, n))],
                           [np.zeros((n, 2 * n)), np.eye(n)], [np.zeros((n, 3 * n))]]))
    Phi, Wa, Wb = E[:n, :n], E[:n, n:2 * n], E[:n, 2 * n:]
    x, Y = sm.x0.copy(), []
    for k in range(t.size):
        Y.append(sm.C @ x)
        if k + 1 < t.size:
            x = Phi @ x + Wa @ sm.B @ u[k] + Wb @ sm.B @ (u[k + 1] - u[k])
    err = np.abs(np.array(Y) - y).max() / np.abs(y).max()
    assert err <= 1e-7  # unstructured model on a held-out input: measured 2e-11


@pytest.mark.parametrize(("seed", "n", "m"), [(4, 4, 2), (8, 8, 2), (10, 10, 3)])
def test_default_fit_reaches_1e_6_on_held_out_input_within_5_s(seed, n, m):
    # exact data, 3 experiments of 2 s (slowest time constant > 2 s), held-out multisine
    p = random_ph(seed, n, m)
    tau = 1.0 / np.abs(np.linalg.eigvals((p["J"] - p["R"]) @ p["Q"]).real).min()
    assert tau > 2.0
    exps = [experiment(p, s) for s in range(3)]
    est = LinearPHIdentifier(n).fit(exps)
    # initial model + refinement as the estimator times them (not the first import of pymanopt)
    elapsed = est.result_.init_time_s + est.result_.time
    assert est.result_.init == "subspace" and est.result_.optimizer == "lm"
    assert_structure(est)
    t, u, y = experiment(p, 99)
    assert est.errors(t, u, y).relative_max <= 1e-6  # measured 5e-15 … 1e-11
    assert elapsed <= 5.0  # measured 0.2 … 1.6 s on one thread


def test_single_experiment_form_scores_and_report():
    p = random_ph(5, 5, 2)
    t, u, y = experiment(p, 0)
    a = LinearPHIdentifier(5).fit(t, u, y)
    b = LinearPHIdentifier(5).fit([(t, u, y)])
    np.testing.assert_array_equal(a.system_.J, b.system_.J)
    t2, u2, y2 = experiment(p, 1)
    err = a.errors(t2, u2, y2)
    assert a.score(t2, u2, y2, metric="relative_max") == err.relative_max
    assert a.score(t2, u2, y2, metric="relative_rms") == err.relative_rms
    assert a.score(t2, u2, y2) > 1.0 - 1e-10  # R²; held-out error measured 2e-13
    # identifiable directions: at most the 2nm invariants of an order-n, m-port model (19 here)
    assert 2 * 5 * 2 - 2 <= a.result_.jacobian_rank <= 2 * 5 * 2
    assert 1.0 < a.result_.condition < 1e10  # measured 2e3
    assert "Levenberg" not in a.result_.report() and "lm from the subspace" in a.result_.report()
    with pytest.raises(ValueError, match="metric"):
        a.score(t2, u2, y2, metric="r3")
    with pytest.raises(TypeError, match="needs both u and y"):
        LinearPHIdentifier(5).fit(t, u)


def test_fallback_to_the_paper_guess_is_recorded():
    p = random_ph(6, 4, 2)
    t, u, y = experiment(p, 0, K=401)
    t = t.copy()
    t[200:] += 0.001 * np.arange(201)  # non-uniform grid: no Hankel matrices
    est = LinearPHIdentifier(4, max_iter=3).fit(t, u, y)
    assert est.result_.init.startswith("paper (a time grid is not uniform")
    with pytest.raises(ValueError, match="init='subspace'"):
        est.plot_order_selection()
    fixed = LinearPHIdentifier(4, learn=("R", "B"), max_iter=2).fit(experiment(p, 0))
    assert fixed.result_.init.startswith("paper (J is fixed")


def test_plots_are_written(tmp_path):
    p = random_ph(7, 4, 2)
    t, u, y = experiment(p, 0)
    est = LinearPHIdentifier(4).fit(t, u, y)
    est.plot(t, u, y, path=tmp_path / "fit.png")
    est.plot_order_selection(path=tmp_path / "order.png")
    assert (tmp_path / "fit.png").stat().st_size > 1000
    assert (tmp_path / "order.png").stat().st_size > 1000


def test_zoh_data_fit_to_round_off_only_with_the_zoh_hold():
    # data of a ZOH importer (co-simulation FMU): the right hold fits to round-off
    p = random_ph(8, 6, 2)
    exps = [experiment(p, s, hold="zoh") for s in range(2)]
    t, u, y = experiment(p, 5, hold="zoh")
    zoh = LinearPHIdentifier(6, input_hold="zoh").fit(exps)
    assert zoh.hold_ == "zoh"
    assert zoh.errors(t, u, y).relative_max <= 1e-8  # measured 1e-13
    lin = LinearPHIdentifier(6).fit(exps)
    assert lin.errors(t, u, y).relative_max > 1e2 * zoh.errors(t, u, y).relative_max


def test_matrix_free_steps_reach_the_dense_accuracy(monkeypatch):
    # large models use CG on the damped normal equations with JᵀJv = adjoint(sensitivity(v));
    # forced here on a small one, it must converge like the dense SVD step
    from fmu_surrogate.identify.linear.optim import lm

    p = random_ph(9, 5, 2)
    exps = [experiment(p, s, K=401) for s in range(2)]
    t, u, y = experiment(p, 7, K=401)
    monkeypatch.setattr(lm, "_DENSE_WORK", 0.0)
    est = LinearPHIdentifier(5, progress=True).fit(exps)
    assert est.result_.jacobian_singular_values == ()  # no dense Jacobian was formed
    assert_structure(est)
    assert est.errors(t, u, y).relative_max <= 1e-6  # measured 1.9e-8


def test_zero_order_hold_adjoint_gradient_matches_finite_differences():
    from fmu_surrogate.identify.linear.model.adjoint_checked import cost, cost_and_gradient

    p = random_ph(11, 4, 2)
    p["x0"] = 0.1 * np.ones(4)
    t, u, y = experiment(p, 0, hold="zoh", K=201, T=1.0)
    e = Experiment.from_arrays(t, u, 1.1 * y, "zoh")
    _, g = cost_and_gradient(p, [e])
    rng = np.random.default_rng(3)
    for k in ("J", "R", "Q", "B", "x0"):
        d = rng.standard_normal(np.shape(p[k]))
        eps = 1e-6
        fd = (cost(dict(p, **{k: p[k] + eps * d}), [e])
              - cost(dict(p, **{k: p[k] - eps * d}), [e])) / (2 * eps)
        assert abs(fd - np.sum(g[k] * d)) <= 1e-7 * abs(fd)  # measured ≤ 5e-9 relative


def test_slow_mode_in_a_short_record_single_experiment():
    # order 6, 3 ports, one 2 s experiment, slowest time constant ≈ 105 s: ill-conditioned for
    # first-order methods, the default reaches round-off on a held-out input
    p = random_ph(6, 6, 3)
    p["R"] = 0.05 * p["R"]
    tau = 1.0 / np.abs(np.linalg.eigvals((p["J"] - p["R"]) @ p["Q"]).real).min()
    assert tau > 50.0  # measured 105 s
    est = LinearPHIdentifier(6).fit(*experiment(p, 0))
    assert_structure(est)
    assert est.errors(*experiment(p, 99)).relative_max <= 1e-9  # measured 1.3e-13
    assert est.result_.init_time_s + est.result_.time <= 5.0  # measured 0.1 s


@pytest.mark.parametrize(("rows", "P"), [(600, 30), (600, 120), (40, 90), (40, 30)])
def test_r_factor_is_numpys_qr_up_to_row_signs(rows, P):
    # Both LAPACK routes (dgeqrf below QR_RECURSIVE_MIN_COLUMNS, dgeqrt from it on) and fewer
    # rows than columns (zero rows below): Householder QR is unique up to the signs of R's
    # rows; graded columns (1 … 1e-10) as a Jacobian's; backward-stable routines agree to a few
    # ulps of the largest entry (measured ≤ 7e-16).
    rng = np.random.default_rng(rows + P)
    A = rng.standard_normal((rows, P)) * np.logspace(0, -10, P)
    R = r_factor(np.asfortranarray(A))
    ref = np.zeros((P, P))
    k = min(rows, P)
    ref[:k] = np.linalg.qr(A, mode="r")
    signs = np.where(np.sign(np.diag(R)) == np.sign(np.diag(ref)), 1.0, -1.0)
    assert np.abs(signs[:, None] * R - ref).max() <= 1e-13 * np.abs(ref).max()
    assert not R[k:].any()
