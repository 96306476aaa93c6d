"""The convex effort: z = ∇H, ∂z/∂x its Hessian, H bounded below for every admissible parameter."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.ph import ConvexEffort, StructureError
from fmu_surrogate.ph.efforts.convex import ridge


def random_effort(rng, n=3, kinds=("quartic", "logcosh", "quartic")):
    L = rng.normal(size=(n, n))
    return ConvexEffort(L @ L.T + 0.1 * np.eye(n), kinds, rng.uniform(0, 3, len(kinds)),
                        2.0 * rng.normal(size=(len(kinds), n)))


def _assert_gradient_and_hessian(eff, x):
    """``z`` the gradient of ``H`` and ``∂z/∂x`` its symmetric Hessian, by central differences
    with step 1e-6: truncation ~e²·|H‴| ≈ 1e-10, round-off ~1e-16/e·|H| ≈ 1e-9 for |H| up to
    ~1e3 (measured max 2e-8 relative)."""
    e, I = 1e-6, np.eye(x.shape[1])
    dH = np.stack([(eff.hamiltonian(x + e * d) - eff.hamiltonian(x - e * d)) / (2 * e)
                   for d in I], axis=1)
    dz = np.stack([(eff(x + e * d) - eff(x - e * d)) / (2 * e) for d in I], axis=2)
    z, Jac = eff(x), eff.jacobian(x)
    assert np.abs(dH - z).max() <= 1e-6 * (1 + np.abs(z).max())
    assert np.abs(dz - Jac).max() <= 1e-6 * (1 + np.abs(Jac).max())
    # symmetric up to the summation order of the products (a few ulps)
    assert np.abs(Jac - np.swapaxes(Jac, 1, 2)).max() <= 1e-14 * np.abs(Jac).max()


def test_effort_is_the_gradient_and_jacobian_the_hessian():
    rng = np.random.default_rng(0)
    _assert_gradient_and_hessian(random_effort(rng), rng.normal(size=(20, 3)))


def test_energy_bounded_below_for_random_parameters():
    rng = np.random.default_rng(1)
    for _ in range(20):
        eff = random_effort(rng)
        x = 10 * rng.normal(size=(200, 3))
        H = eff.hamiltonian(x)
        # H ≥ ½ λ_min(Q)|x|² exactly: each ridge term is ≥ 0
        lam = np.linalg.eigvalsh(eff.Q).min()
        assert np.all(H >= 0.5 * lam * (x * x).sum(axis=1) * (1 - 1e-12))
        assert eff.hamiltonian(np.zeros((1, 3)))[0] == 0.0
        assert np.all(np.linalg.eigvalsh(eff.jacobian(x)) > 0)  # convex


def test_logcosh_is_stable_for_large_arguments():
    eff = ConvexEffort([[1.0]], ["logcosh"], [1.0], [[1.0]])
    x = np.array([[1e3], [-1e3]])
    # log cosh s = |s| − log 2 + log1p(e^{−2|s|}): no overflow
    assert np.allclose(eff.hamiltonian(x), 0.5e6 + 1e3 - np.log(2.0), rtol=1e-15)
    assert np.allclose(eff(x)[:, 0], [1e3 + 1.0, -1e3 - 1.0], rtol=1e-15)


@pytest.mark.parametrize("kw, match", [
    ({"weights": [-0.1]}, "weights must be >= 0"),
    ({"kinds": ["cubic"]}, "unknown ridge kinds"),
    ({"directions": [[1.0, np.nan]]}, "finite"),
    ({"directions": [[1.0, 0.0, 0.0]]}, "directions of shape"),
])
def test_inadmissible_parameters_are_refused(kw, match):
    args = {"Q": np.eye(2), "kinds": ["quartic"], "weights": [1.0], "directions": [[1.0, 0.0]]}
    args.update(kw)
    with pytest.raises(StructureError, match=match):
        ConvexEffort(**args)
    with pytest.raises(StructureError, match="positive definite"):
        ConvexEffort(np.diag([1.0, 0.0]))


def test_dict_round_trip_is_exact():
    rng = np.random.default_rng(2)
    eff = random_effort(rng)
    back = ConvexEffort.from_dict(eff.to_dict())
    x = rng.normal(size=(5, 3))
    assert np.array_equal(back(x), eff(x)) and back.kinds == eff.kinds
    assert np.array_equal(back.hamiltonian(x), eff.hamiltonian(x))


def test_a_periodic_ridge_gives_a_pendulums_energy_exactly():
    """``Q = I``, ``x = (√k θ, p)``, ``w = (1/√k, 0)``, ``α = k``: ``H = p²/2 + k (1 − cos θ)``
    over several turns, ``z = (√k sin θ, p)`` and ``∂z/∂x = diag(cos θ, 1)``."""
    k = 9.81
    eff = ConvexEffort(np.eye(2), ["periodic"], [k], [[1.0 / np.sqrt(k), 0.0]])
    th = np.linspace(-20.0, 20.0, 41)
    p = np.linspace(-3.0, 3.0, 41)
    x = np.column_stack([np.sqrt(k) * th, p])
    # ½ s² − (1 − cos s) with ½ s² up to 200 k: round-off of that size, ~1e-13 of it
    assert np.allclose(eff.hamiltonian(x), 0.5 * p**2 + k * (1 - np.cos(th)), rtol=0, atol=1e-11)
    assert np.allclose(eff(x), np.column_stack([np.sqrt(k) * np.sin(th), p]), rtol=0, atol=1e-12)
    J = eff.jacobian(x)
    assert np.allclose(J[:, 0, 0], np.cos(th), rtol=0, atol=1e-14)
    assert np.all(J[:, 1, 1] == 1.0) and np.all(J[:, 0, 1] == 0.0)


def _periodic_effort(rng, share, n=3):
    """Q ≻ 0 with a periodic ridge taking ``share`` of the form along its direction
    (``α wᵀQ⁻¹w = share``), and a quartic and a logcosh ridge."""
    L = rng.normal(size=(n, n))
    Q = L @ L.T + 0.1 * np.eye(n)
    w = 2.0 * rng.normal(size=(3, n))
    a = np.concatenate([[share / (w[0] @ np.linalg.solve(Q, w[0]))], rng.uniform(0, 3, 2)])
    return ConvexEffort(Q, ["periodic", "quartic", "logcosh"], a, w)


def test_periodic_effort_is_the_gradient_and_bounded_below():
    rng = np.random.default_rng(3)
    eff = _periodic_effort(rng, 1.0)
    _assert_gradient_and_hessian(eff, rng.normal(size=(20, 3)))
    for _ in range(20):
        eff = _periodic_effort(rng, rng.uniform(0.0, 1.0))
        x = 10 * rng.normal(size=(200, 3))
        # H ≥ 0 up to the round-off of ½ xᵀQx (the periodic term cancels part of it)
        scale = 0.5 * ((x @ eff.Q) * x).sum(axis=1)
        assert np.all(eff.hamiltonian(x) >= -1e-12 * scale)


def test_a_periodic_ridge_beyond_the_quadratic_form_is_refused():
    rng = np.random.default_rng(4)
    _periodic_effort(rng, 1.0 - 1e-15)  # at the edge (a pendulum): admissible
    with pytest.raises(StructureError, match="not bounded below"):
        _periodic_effort(rng, 1.01)


def test_a_preloaded_ridge_is_the_spring_law_about_its_load():
    """A spring k₁ q + k₃ q³ at rest under the load g at q_e (k₁ q_e + k₃ q_e³ = −g): its force
    about q_e, f(q_e + δ) − f(q_e), is the quartic ridge shifted by q_e with Q = k₁; the energy
    is the spring's energy less its value and slope at q_e, ≥ 0 and zero with its slope at 0."""
    k1, k3, qe = 1.0, 2.0, -0.8351223484813666
    eff = ConvexEffort([[k1]], ["quartic"], [k3], [[1.0]], [qe])
    d = np.linspace(-1.5, 1.5, 31)[:, None]
    force = k1 * (qe + d) + k3 * (qe + d) ** 3 - (k1 * qe + k3 * qe ** 3)
    # exact polynomial identities evaluated in floating point: a few ulps of forces up to ~20
    assert np.abs(eff(d) - force).max() < 1e-13
    U = 0.5 * k1 * (qe + d) ** 2 + 0.25 * k3 * (qe + d) ** 4
    Ue, fe = 0.5 * k1 * qe ** 2 + 0.25 * k3 * qe ** 4, k1 * qe + k3 * qe ** 3
    assert np.abs(eff.hamiltonian(d) - (U - Ue - fe * d)[:, 0]).max() < 1e-13
    assert eff.hamiltonian(np.zeros((1, 1)))[0] == 0.0 and eff(np.zeros((1, 1)))[0, 0] == 0.0
    assert np.abs(eff.jacobian(d)[:, 0, 0] - (k1 + 3 * k3 * (qe + d[:, 0]) ** 2)).max() < 1e-13


def test_preloaded_ridges_keep_gradient_hessian_and_bound():
    rng = np.random.default_rng(3)
    L = rng.normal(size=(3, 3))
    eff = ConvexEffort(L @ L.T + 0.1 * np.eye(3), ["quartic", "logcosh"], [1.5, 2.0],
                       rng.normal(size=(2, 3)), [0.7, -1.3])
    x = rng.normal(size=(20, 3))
    _assert_gradient_and_hessian(eff, x)
    # Bregman divergences of convex ridges: H ≥ ½ λ_min(Q)|x|² (round-off of sums ~1e-12)
    big = 5.0 * rng.normal(size=(200, 3))
    lam = float(np.linalg.eigvalsh(eff.Q).min())
    assert np.all(eff.hamiltonian(big) >= 0.5 * lam * (big ** 2).sum(axis=1) - 1e-9)
    back = ConvexEffort.from_dict(eff.to_dict())
    assert np.array_equal(back.shifts, eff.shifts) and np.array_equal(back(x), eff(x))
    assert "shifts" not in ConvexEffort(np.eye(1), ["quartic"], [1.0], [[1.0]]).to_dict()


def test_a_periodic_ridge_takes_no_shift():
    with pytest.raises(StructureError, match="periodic ridge takes no shift"):
        ConvexEffort(np.eye(2), ["periodic"], [0.5], [[1.0, 0.0]], [0.3])
    with pytest.raises(StructureError, match="1 ridge terms need 1 shifts"):
        ConvexEffort(np.eye(2), ["quartic"], [0.5], [[1.0, 0.0]], [0.3, 0.1])


# -- the gap ridge: end stops, a contact beyond a clearance -----------------------------------
def test_gap_ridge_values_at_chosen_points():
    """``ψ = ½ (|s| − 1)₊²``, ``ψ' = s − clip(s, −1, 1)``, ``ψ'' = [|s| > 1]``: binary fractions,
    so every value is exact (``ψ''`` at the stops ``|s| = 1`` taken from inside the gap)."""
    s = np.array([-3.0, -1.5, -1.0, -0.5, 0.0, 0.75, 1.0, 1.25, 2.0])
    assert np.array_equal(ridge("gap", s, 0), [2.0, 0.125, 0, 0, 0, 0, 0, 0.03125, 0.5])
    assert np.array_equal(ridge("gap", s, 1), [-2.0, -0.5, 0, 0, 0, 0, 0, 0.25, 1.0])
    assert np.array_equal(ridge("gap", s, 2), [1.0, 1.0, 0, 0, 0, 0, 0, 1.0, 1.0])


def test_gap_ridge_derivatives_are_finite_differences_away_from_the_stops():
    """Central differences with step 1e-6 at points at least 1e-3 from the kinks ``|s| = 1``:
    ``ψ`` is piecewise quadratic, so the differences carry no truncation error, only round-off
    of ψ up to 8 over the step, ~2e-15 / 2e-6 ≈ 1e-9 (measured 9.3e-10)."""
    s = np.random.default_rng(20).uniform(-5.0, 5.0, 2000)
    s = s[np.abs(np.abs(s) - 1.0) > 1e-3]
    e = 1e-6
    d1 = (ridge("gap", s + e, 0) - ridge("gap", s - e, 0)) / (2 * e)
    d2 = (ridge("gap", s + e, 1) - ridge("gap", s - e, 1)) / (2 * e)
    assert np.abs(d1 - ridge("gap", s, 1)).max() < 5e-9
    assert np.abs(d2 - ridge("gap", s, 2)).max() < 5e-9
    # inside the gap nothing at all; outside the slope is the distance beyond the stop
    inside = np.abs(s) <= 1.0
    assert np.all(ridge("gap", s[inside], 0) == 0) and np.all(ridge("gap", s[inside], 1) == 0)
    assert np.array_equal(ridge("gap", s[~inside], 1), s[~inside] - np.sign(s[~inside]))


def _gap_effort(rng, shifts=(0.6, -1.4)):
    """Q ≻ 0 with two gap ridges (preloaded: one rest inside its gap, one beyond a stop) and a
    quartic one."""
    L = rng.normal(size=(3, 3))
    return ConvexEffort(L @ L.T + 0.1 * np.eye(3), ["gap", "gap", "quartic"], [3.0, 1.5, 0.5],
                        2.0 * rng.normal(size=(3, 3)), [*shifts, 0.0])


def test_gap_effort_is_the_gradient_and_bounded_below_with_shifts():
    rng = np.random.default_rng(21)
    eff = _gap_effort(rng)
    x = rng.normal(size=(200, 3))
    arg = x @ eff.directions[:2].T + eff.shifts[:2]
    x = x[np.all(np.abs(np.abs(arg) - 1.0) > 1e-3, axis=1)][:40]  # away from the stops
    assert np.any(np.abs(arg) > 1.0) and np.any(np.abs(arg) < 1.0)  # both sides tested
    _assert_gradient_and_hessian(eff, x)
    # Bregman divergences of convex ridges: H ≥ ½ λ_min(Q)|x|² (round-off of sums ~1e-12),
    # rest stays at 0 with zero energy and zero force, and the Hessian is ⪰ Q
    big = 5.0 * rng.normal(size=(500, 3))
    lam = float(np.linalg.eigvalsh(eff.Q).min())
    assert np.all(eff.hamiltonian(big) >= 0.5 * lam * (big ** 2).sum(axis=1) - 1e-9)
    zero = np.zeros((1, 3))
    assert eff.hamiltonian(zero)[0] == 0.0 and np.all(eff(zero) == 0.0)
    # the ridges' part of the Hessian is PSD, up to the eigen-solver's round-off of its size
    # (entries up to 5e4 from the quartic ridge; measured ≥ −2.4e-16 of them)
    ridges = eff.jacobian(big) - eff.Q
    size = np.abs(ridges).max(axis=(1, 2))
    assert np.all(np.linalg.eigvalsh(ridges).min(axis=1) >= -1e-13 * size)


def test_a_shifted_gap_puts_the_stops_asymmetrically_about_rest():
    """A spring ``k q`` between stops: ``w = 1/g``, ``α = k_c g²``, the shift ``c``: the gap of
    width ``2/|w| = 2g`` centred at ``−c/|w| = −c g``, i.e. the stops at ``q = −g(1 + c)`` and
    ``g(1 − c)``; no contact force between them, ``k_c`` times the distance beyond them."""
    k, kc, g, c = 2.0, 50.0, 0.5, 0.25
    eff = ConvexEffort([[k]], ["gap"], [kc * g * g], [[1.0 / g]], [c])
    lo, hi = -g * (1 + c), g * (1 - c)  # -0.625 and 0.375
    q = np.arange(-48, 49)[:, None] / 32.0  # binary fractions, both stops on the grid
    assert np.sum(q == lo) == 1 and np.sum(q == hi) == 1
    beyond = np.maximum(q - hi, 0.0) - np.maximum(lo - q, 0.0)
    # binary fractions of few bits: every operation exact (measured 0), so a bound of a few
    # ulps of forces up to 50 is generous
    assert np.abs(eff(q) - (k * q + kc * beyond)).max() < 1e-13
    H = 0.5 * k * q[:, 0] ** 2 + 0.5 * kc * beyond[:, 0] ** 2
    assert np.abs(eff.hamiltonian(q) - H).max() < 1e-13
    inside = (q[:, 0] > lo) & (q[:, 0] < hi)
    assert np.array_equal(eff(q[inside])[:, 0], k * q[inside, 0])  # the stops are not touched
    assert np.array_equal(eff.jacobian(q)[:, 0, 0], np.where(inside | (q[:, 0] == lo)
                                                              | (q[:, 0] == hi), k, k + kc))


def test_gap_files_are_version_2_and_others_stay_version_1(tmp_path):
    """The oldest version that holds the content: a gap ridge needs version 2 (an older reader
    refuses the file as a version it does not read), every other effort stays version 1; both
    read back exactly, through JSON and through a surrogate file."""
    import json

    from fmu_surrogate.errors import InvalidInputError
    from fmu_surrogate.ph import NonlinearPH, load, save

    rng = np.random.default_rng(22)
    eff = _gap_effort(rng)
    d = json.loads(json.dumps(eff.to_dict()))
    assert d["version"] == 2 and d["kinds"] == ["gap", "gap", "quartic"]
    back = ConvexEffort.from_dict(d)
    x = 2.0 * rng.normal(size=(50, 3))
    assert back.kinds == eff.kinds and np.array_equal(back.shifts, eff.shifts)
    for f in ("__call__", "jacobian", "hamiltonian"):
        assert np.array_equal(getattr(back, f)(x), getattr(eff, f)(x)), f
    old = random_effort(rng)
    assert old.to_dict()["version"] == 1 and _gap_effort(rng, (0.0, 0.0)).to_dict()["version"] == 2
    assert np.array_equal(ConvexEffort.from_dict(old.to_dict())(x), old(x))
    with pytest.raises(InvalidInputError, match="version 3, newer"):
        ConvexEffort.from_dict({**d, "version": 3})
    with pytest.raises(InvalidInputError, match="not a convex effort"):
        ConvexEffort.from_dict({**d, "version": "2"})
    sysm = NonlinearPH([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.5], [0.0, -0.5, 0.0]], np.diag([0, 0.2, 0.1]),
                       [[0.0], [1.0], [0.0]], eff)
    loaded = load(save(sysm, tmp_path / "gap.json"))
    assert np.array_equal(loaded.effort(x), sysm.effort(x))
    assert np.array_equal(loaded.hamiltonian(x), sysm.hamiltonian(x))


def _gl4(eff, x):
    """Per step of a trajectory ``x``: ``H(x₁) − H(x₀) − Δxᵀ z̄`` with ``z̄`` the mean effort by
    four Gauss–Legendre nodes (``numpy.polynomial``'s, independent of the scheme's table)."""
    nodes, wts = np.polynomial.legendre.leggauss(4)
    x0, dx = x[:-1], np.diff(x, axis=0)
    zbar = sum(0.5 * wq * eff(x0 + 0.5 * (tq + 1.0) * dx) for tq, wq in zip(nodes, wts))
    return eff.hamiltonian(x[1:]) - eff.hamiltonian(x0) - (dx * zbar).sum(axis=1)


def test_a_mass_between_end_stops_matches_scipy():
    """``m q̈ = F − c q̇ − k q − k_c (|q| − g)₊ sign q``: a mass on a spring between symmetric
    end stops at ``±g`` (``x = (q, p)``, ``Q = diag(k, 1/m)``, ``w = (1/g, 0)``,
    ``α = k_c g²``), driven into the stops five times each way."""
    from scipy.integrate import solve_ivp

    from fmu_surrogate.ph import NonlinearPH, simulate

    m, k, c, kc, g = 1.0, 1.0, 0.3, 40.0, 0.5
    eff = ConvexEffort(np.diag([k, 1 / m]), ["gap"], [kc * g * g], [[1 / g, 0.0]])
    sysm = NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, c]), [[0.0], [1.0]], eff)
    F = lambda s: 3.0 * np.sin(1.3 * s) + 0.5 * np.cos(0.3 * s)

    def rhs(s, x):
        q, p = x
        return [p / m, F(s) - c * p / m - k * q - kc * max(abs(q) - g, 0.0) * np.sign(q)]

    errs = []
    for N in (2001, 4001):
        t = np.linspace(0.0, 10.0, N)
        tr = simulate(sysm, t, F(t), x0=[0.2, 0.0])
        ref = solve_ivp(rhs, (0, 10), [0.2, 0.0], t_eval=t, rtol=1e-12, atol=1e-12,
                        method="DOP853")
        errs.append(np.abs(tr.x - ref.y.T).max() / np.abs(ref.y).max())
    s = tr.x[:, 0] / g
    cross = (np.abs(s[:-1]) > 1.0) != (np.abs(s[1:]) > 1.0)
    assert cross.sum() == 10 and np.abs(s).max() > 1.7  # well into the stops
    # AVF's O(h²) error with the kinks inside steps: h = 2.5e-3 over 10 s, measured 6.1e-4 of
    # max |x| (DOP853 at 1e-12 adds nothing visible), 4.05 times less than at twice the step
    assert errs[1] < 1.5e-3
    assert 3.5 < errs[0] / errs[1] < 4.5
    # the energy balance: the scheme's residual is its 4-node quadrature of z along the steps
    # (the gradient theorem makes H(x₁) − H(x₀) the exact integral), rebuilt here to round-off
    # (measured 1.6e-14 absolute; Newton stops at 1e-12 of the state) ...
    per = _gl4(eff, tr.x)
    assert abs(tr.energy_residual - per.sum()) < 1e-12 * tr.energy_scale
    # ... which is round-off on the steps within one side of a stop (measured 9.9e-16) and,
    # on the 10 that cross one, at most the quadrature bound 9.2e-3 α Δs² of the module doc
    # (up to 0.85 of it per step; the residual 9.8e-6 on a scale of 5.1: not round-off, within
    # the summed bound 4.2e-5)
    assert np.abs(per[~cross]).max() < 1e-13 * tr.energy_scale
    ds = np.diff(s)[cross]
    assert np.all(np.abs(per[cross]) <= 9.2e-3 * kc * g * g * ds ** 2)
    assert abs(tr.energy_residual) <= 9.2e-3 * kc * g * g * (ds ** 2).sum() + 1e-12
