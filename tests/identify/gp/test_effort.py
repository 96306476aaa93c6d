"""GPEffortIdentifier on the paper's benchmarks (docs/design.md §3) and at its boundary.

Accuracy protocol (as the paper): one fixed random test set of 500 samples of the Euler data,
random training subsets drawn from the remaining samples; RMSE per component.  The paper averages
five repetitions; we use three (resp. one for the slow dense Hamiltonian variant) to keep the
suite fast — the asserted bounds are the paper's error levels and, tighter, about three times
what this recipe measures (seeded subsets), so fewer repetitions do not make them fragile.

Note on the data: ``euler_data()`` gives ``ẋ`` as the exact right-hand side at the Euler samples,
so the targets are consistent with the true effort at the sampled states; the paper's 1e-2 floor
for the differential components came from derivative data of the Euler trajectory.  Our errors
are therefore mostly far below the paper's levels.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fmu_surrogate.benchmarks import pendulum, rc_network
from fmu_surrogate.identify import GPEffortIdentifier
from fmu_surrogate.identify.base import NotFittedError
from fmu_surrogate.ph import PHDAE, StructureError
from fmu_surrogate.ph.efforts.gaussian import gaussian_kernel as rbf_np
from fmu_surrogate.ph.efforts.kernel import KernelEffort

torch.set_num_threads(1)


def split(traj, n_test=500, seed=0):
    idx = np.random.default_rng(seed).permutation(len(traj.t))
    return idx[:n_test], idx[n_test:]


def rmse(a, b):
    return np.sqrt(np.mean((a - b) ** 2, axis=0))


@pytest.fixture(scope="module")
def rc():
    tr = rc_network.euler_data()
    test, pool = split(tr)
    return tr, rc_network.matrices(), test, pool


@pytest.fixture(scope="module")
def pend():
    tr = pendulum.euler_data()
    test, pool = split(tr)
    return tr, pendulum.matrices(), test, pool


def learn(data, N, rep, **kw):
    tr, mats, _test, pool = data
    sel = np.random.default_rng(100 + rep).permutation(pool)[:N]
    return GPEffortIdentifier(**mats, **kw).fit(tr.x[sel], tr.xdot[sel], tr.u[sel])


def errors(model, data, true_effort):
    tr, mats, test, _ = data
    f_true = tr.xdot[test] @ mats["E"].T - tr.u[test] @ mats["B"].T
    return rmse(model.predict_targets(tr.x[test]), f_true), rmse(
        model.effort(tr.x[test]), true_effort(tr.x[test])
    )


# ---------------------------------------------------------------------------------------------
# paper's error levels, plain variant
# ---------------------------------------------------------------------------------------------
def test_rc_network_reaches_paper_levels(rc):
    """Paper: component 1 at the 1e-2 level from N = 16; components 2–3 near 1e-5 at N = 128."""
    e16 = np.mean([errors(learn(rc, 16, r), rc, rc_network.effort) for r in range(3)], axis=0)
    e128 = np.mean([errors(learn(rc, 128, r), rc, rc_network.effort) for r in range(3)], axis=0)
    f16, z16 = e16
    f128, z128 = e128
    # the paper's levels, and (regression bounds) about 3x what this recipe measures: component
    # 1 at N = 16 1.1e-4, components 2-3 at N = 128 <= 6.2e-7 (seeded subsets, float64)
    assert f16[0] <= 1e-2 and z16[0] <= 1e-2
    assert np.all(f128[1:] <= 1e-5) and np.all(z128[1:] <= 1e-5)
    assert f16[0] <= 4e-4 and z16[0] <= 4e-4
    assert np.all(f128[1:] <= 2e-6) and np.all(z128[1:] <= 2e-6)


def test_pendulum_reaches_paper_levels(pend):
    """Paper: all five components of T z and of z at the 1e-2 level by N = 64."""
    f, z = np.mean([errors(learn(pend, 64, r), pend, pendulum.effort) for r in range(3)], axis=0)
    assert np.all(f <= 1e-2) and np.all(z <= 1e-2)
    assert np.all(f <= 1e-4) and np.all(z <= 1e-4)  # measured <= 2.7e-5 (3.7x margin)


# ---------------------------------------------------------------------------------------------
# consistency of the fitted object
# ---------------------------------------------------------------------------------------------
def test_surrogate_kernel_expansion_and_targets_agree(rc):
    tr, mats, test, _ = rc
    m = learn(rc, 32, 0)
    x = tr.x[test[:50]]
    z = m.effort(x)
    S = m.to_surrogate()
    assert isinstance(S, PHDAE) and not S.has_hamiltonian
    assert isinstance(m.surrogate_, PHDAE)
    # KernelEffort in original units reproduces the standardised posterior mean: same formula,
    # exactly rescaled ⇒ round-off only (weights are O(1e3) here, hence 1e-9 absolute)
    assert np.abs(S.effort(x) - z).max() < 1e-9
    assert np.allclose(m.predict_targets(x), z @ (mats["J"] - mats["R"]).T, rtol=0, atol=1e-12)
    # the surrogate's flow reproduces E ẋ at the test states to the learning error
    flow = S.flow(x, tr.u[test[:50]])
    assert np.abs(flow - tr.xdot[test[:50]] @ mats["E"].T).max() < 1e-2
    ke = m.kernel_effort()
    assert isinstance(ke, KernelEffort) and ke.n_centres == 32
    assert m.loss_history_.shape == (200,) and np.isfinite(m.log_marginal_likelihood_)
    # the kept hyperparameters are the best seen
    assert -m.log_marginal_likelihood_ <= np.nanmin(m.loss_history_) + 1e-9


def test_learned_hyperparameters_reproduce_the_posterior_in_original_units(rc):
    """Dense conditioning in the original units with the reported ``lengthscale_``,
    ``task_covariance_``, ``noise_``, ``mean_`` equals ``effort(x, return_cov=…)``: checks that
    the internal standardisation is undone exactly (cond(C) ≈ 1e9 here → 1e-6 relative)."""
    tr, mats, test, _ = rc
    m = learn(rc, 12, 1, max_iter=60, mean="constant")
    T = mats["J"] - mats["R"]
    X, Y = m.X_train_, m.y_train_
    N, n = X.shape
    K = rbf_np(X, X, m.lengthscale_)
    C = np.kron(K, T @ m.task_covariance_ @ T.T) + np.kron(np.eye(N), np.diag(m.noise_))
    xs = tr.x[test[:5]]
    cross = np.kron(rbf_np(xs, X, m.lengthscale_), m.task_covariance_ @ T.T)
    mean = (cross @ np.linalg.solve(C, (Y - m.mean_ @ T.T).reshape(-1))).reshape(5, n) + m.mean_
    cov = np.kron(rbf_np(xs, xs, m.lengthscale_), m.task_covariance_) - cross @ np.linalg.solve(
        C, cross.T
    )
    z, c_full = m.effort(xs, return_cov="full")
    _, c_pt = m.effort(xs, return_cov=True)
    # the posterior covariance is prior − correction with heavy cancellation: scale errors by
    # the prior's size |K_T|
    prior = np.abs(m.task_covariance_).max()
    assert np.abs(z - mean).max() <= 1e-6 * np.abs(mean).max()
    assert np.abs(c_full - cov).max() <= 1e-6 * prior
    for i in range(5):
        blk = c_full[i * n : (i + 1) * n, i * n : (i + 1) * n]
        assert np.allclose(c_pt[i], blk, rtol=0, atol=1e-12 * prior)
    assert np.allclose(
        m.task_covariance_, m.task_factor_ @ m.task_factor_.T + np.diag(m.task_diag_)
    )


def test_two_samples_suffice(rc):
    """The paper's learning curves start at N = 2."""
    m = learn(rc, 2, 0, max_iter=20)
    # with two samples the learned noise explains the misfit at the training points: the
    # posterior mean stays within 2 noise standard deviations there (measured 0.06 vs 2σ ≥ 0.16)
    res = np.abs(m.predict_targets(m.X_train_) - m.y_train_)
    assert np.all(res <= 2 * np.sqrt(m.noise_))


def test_shared_noise_isotropic_float32_run(rc):
    m = learn(rc, 16, 0, noise="shared", ard=False, dtype="float32", max_iter=50)
    # shared noise and one isotropic length scale in the original units (the paper's kernel)
    assert np.allclose(m.noise_, m.noise_[0]) and np.allclose(m.lengthscale_, m.lengthscale_[0])
    f, _ = errors(m, rc, rc_network.effort)
    assert f[2] < 5e-3  # float32 + 50 steps: measured 1.5e-3 (3.3x margin)


# ---------------------------------------------------------------------------------------------
# Hamiltonian-consistent variant
# ---------------------------------------------------------------------------------------------
def _fd_grad(H, x, idx, h=1e-6):
    g = np.zeros((len(x), len(idx)))
    for j, k in enumerate(idx):
        e = np.zeros(x.shape[1])
        e[k] = h
        g[:, j] = (H(x + e) - H(x - e)) / (2 * h)
    return g


def test_rc_hamiltonian_variant(rc):
    tr, mats, test, _ = rc
    m = learn(rc, 64, 0, hamiltonian=True)
    S = m.to_surrogate()
    assert S.has_hamiltonian
    x = tr.x[test]
    z = S.effort(x)
    # compatibility Eᵀz = ∇H̄ (∇H̄ = 0 in x2, x3): by construction → round-off (1e-12 relative)
    gradH = np.zeros_like(z)
    gradH[:, 0] = m.kernel_effort().hamiltonian_gradient(x)[:, 0]
    assert np.abs(z @ mats["E"] - gradH).max() <= 1e-12 * np.abs(z).max()
    # … and ∇H̄ really is the gradient of the H̄ the surrogate reports.  Central FD with
    # h = 1e-4: the interpolating expansion has weights |V| ≈ 1e4, so cancellation costs
    # ≈ eps·1e4/h ≈ 1e-8, and truncation h²|z''|/6 with the short length scale (≈ 0.2, |z''| ≈
    # 50) ≈ 1e-7; measured 4e-7 → bound 1e-5 (|z| ≈ 1)
    g_fd = _fd_grad(S.hamiltonian, x[:100], [0, 1, 2], h=1e-4)
    assert np.abs(g_fd[:, 0] - z[:100, 0]).max() < 1e-5
    assert np.abs(g_fd[:, 1:]).max() < 1e-9  # H̄ does not depend on x2, x3 at all
    # accuracy: component 1 at the paper's 1e-2 level (measured 1.3e-2: H is a GP in x1 alone, a
    # stationary kernel must resolve √(2 x1) near x1 → 0), components 2–3 well below
    f, ze = errors(m, rc, rc_network.effort)
    # (measured: z1 3.3e-3, z2 5.8e-7, z3 1.1e-4, f3 5.8e-7; bounds about 3x that)
    assert ze[0] <= 1e-2 and f[0] <= 1e-2
    assert ze[1] <= 2e-6 and ze[2] <= 4e-4 and f[2] <= 2e-6
    # H̄ matches the true H up to a constant within the learning error: |ΔH| ≤ ∫|Δz1| dx1, so
    # bound the centred RMSE by (x1 range) × RMSE(z1)
    dH = S.hamiltonian(x) - rc_network.hamiltonian(x)
    assert np.sqrt(np.mean((dH - dH.mean()) ** 2)) <= np.ptp(x[:, 0]) * ze[0]


def test_pendulum_hamiltonian_with_constraint_force(pend):
    """With the constraint-force term the model class contains the true pendulum: all components
    at the paper's level (measured ≈ 1e-6) and H̄ = ½|p|² + q2 up to a constant."""
    tr, mats, test, _ = pend
    m = learn(pend, 64, 0, hamiltonian=True, constraint_force=True)
    f, z = errors(m, pend, pendulum.effort)
    assert np.all(f <= 5e-6) and np.all(z <= 5e-6)  # measured <= 1.6e-6 (paper level 1e-2)
    S = m.to_surrogate()
    x = tr.x[test]
    dH = S.hamiltonian(x) - pendulum.hamiltonian(x)
    assert np.sqrt(np.mean((dH - dH.mean()) ** 2)) <= 5e-7  # measured 1.7e-7
    # Eᵀz = ∇H̄ + Φ(x_d) x_a exactly (the pendulum's own compatibility, see gp_hamiltonian)
    ke = m.kernel_effort()
    d = ke.differential
    res = z_d = (
        S.effort(x)[:, d] @ mats["E"][np.ix_(d, d)]
        - ke.hamiltonian_gradient(x)
        - ke.constraint_force(x)
    )
    assert np.abs(res).max() <= 1e-12 * np.abs(z_d).max() + 1e-12


def test_pendulum_hamiltonian_without_constraint_force_is_limited(pend):
    """Documents the representational limit (gp_hamiltonian docstring): z_q = ∇U − 2qλ depends on
    the algebraic λ, which H(q, p) cannot represent; z_λ is unaffected."""
    m = learn(pend, 32, 0, hamiltonian=True, max_iter=100)
    _, z = errors(m, pend, pendulum.effort)
    assert np.all(z[:2] > 5e-2)  # measured 0.3–0.9
    assert z[4] <= 1e-6


# ---------------------------------------------------------------------------------------------
# boundary: bad input is refused with a message naming the fix
# ---------------------------------------------------------------------------------------------
def _ok(n=20):
    tr = rc_network.euler_data()
    k = np.linspace(0, len(tr.t) - 1, n).astype(int)
    return rc_network.matrices(), tr.x[k], tr.xdot[k], tr.u[k]


def test_bad_structure_matrices():
    mats, x, xd, u = _ok()
    with pytest.raises(StructureError, match="skew"):
        GPEffortIdentifier(**{**mats, "J": np.eye(3)}).fit(x, xd, u)
    with pytest.raises(StructureError, match="positive semidefinite"):
        GPEffortIdentifier(**{**mats, "R": -np.eye(3)}).fit(x, xd, u)
    with pytest.raises(StructureError, match="B must have shape"):
        GPEffortIdentifier(**{**mats, "B": np.ones((2, 1))}).fit(x, xd, u)
    with pytest.raises(StructureError, match="E must have shape"):
        GPEffortIdentifier(**{**mats, "E": np.eye(2)}).fit(x, xd, u)


def test_bad_data():
    mats, x, xd, u = _ok()
    est = GPEffortIdentifier(**mats, max_iter=2)
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN.*drop those samples"):
        est.fit(bad, xd, u)
    with pytest.raises(ValueError, match="at least 2 samples"):
        est.fit(x[:1], xd[:1], u[:1])
    with pytest.raises(ValueError, match=r"x must have shape \(N, 3\)"):
        est.fit(x[:, :2], xd, u)
    with pytest.raises(ValueError, match="xdot must have the shape of x"):
        est.fit(x, xd[:-1], u)
    with pytest.raises(ValueError, match="u must have shape"):
        est.fit(x, xd, np.ones((len(x), 2)))
    with pytest.raises(NotFittedError, match="not fitted"):
        GPEffortIdentifier(**mats).effort(x)
    with pytest.raises(ValueError, match="noise must be"):
        GPEffortIdentifier(**mats, noise="per-point").fit(x, xd, u)
    with pytest.raises(ValueError, match="task_rank"):
        GPEffortIdentifier(**mats, task_rank=7).fit(x, xd, u)
    est.fit(x, xd, u)
    with pytest.raises(ValueError, match="shape"):
        est.effort(x[:, :2])


def test_bad_descriptor_for_hamiltonian_variant():
    mats, x, xd, u = _ok()
    E = mats["E"].copy()
    E[0, 1] = 1.0  # couples an algebraic column into a differential row
    with pytest.raises(StructureError, match="diag\\(E_dd, 0\\)"):
        GPEffortIdentifier(
            **{**mats, "E": E}, hamiltonian=True, differential=[True, False, False], max_iter=2
        ).fit(x, xd, u)
    # default split from E: states 0 and 1 differential, E_dd = [[1, 1], [0, 0]] singular
    with pytest.raises(StructureError, match="E_dd of E to be regular"):
        GPEffortIdentifier(**{**mats, "E": E}, hamiltonian=True, max_iter=2).fit(x, xd, u)
    with pytest.raises(ValueError, match="at least one differential state"):
        GPEffortIdentifier(**{**mats, "E": np.zeros((3, 3))}, hamiltonian=True, max_iter=2).fit(
            x, xd, u
        )


def test_fit_dataset_reads_runs(monkeypatch):
    """fit_dataset pools the runs that fmu.dataset.run_arrays returns and fills None derivatives
    (algebraic states) with zeros; the result equals fit on the arrays."""
    import fmu_surrogate.fmu.dataset as dsmod

    mats, x, xd, u = _ok(30)
    calls = {}

    def fake_run_arrays(ds, names, runs=None):
        calls["names"], calls["runs"] = list(names), runs
        A = np.column_stack([x, xd[:, :1], u])
        return [(np.arange(15.0), A[:15]), (np.arange(15.0), A[15:])]

    monkeypatch.setattr(dsmod, "run_arrays", fake_run_arrays)
    a = GPEffortIdentifier(**mats, max_iter=5).fit_dataset(
        None, states=["x1", "x2", "x3"], derivatives=["der(x1)", None, None], inputs=["u"],
        runs=[0, 1],
    )
    b = GPEffortIdentifier(**mats, max_iter=5).fit(x, np.column_stack([xd[:, 0], 0 * x[:, 1:]]), u)
    assert calls["names"] == ["x1", "x2", "x3", "der(x1)", "u"] and calls["runs"] == [0, 1]
    assert np.array_equal(a.y_train_, b.y_train_)
    assert np.allclose(a.effort(x), b.effort(x), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="column 0 of E is nonzero"):
        GPEffortIdentifier(**mats).fit_dataset(
            None, states=["x1", "x2", "x3"], derivatives=[None, None, None], inputs=["u"]
        )
