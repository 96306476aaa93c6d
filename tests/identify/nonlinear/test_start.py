"""The linear start in its wiring: a power-out port, a measured output with an offset (the
constant-source port) — kept by the nonlinear fit, which then fits the saturating coil."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.benchmarks.vendor import saturating_inductor as si
from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset
from fmu_surrogate.identify.nonlinear.estimator import NonlinearFitError, NonlinearPHIdentifier
from fmu_surrogate.identify.nonlinear.start import linear_start


@pytest.fixture(scope="module")
def coil(vendor_data):
    """The coil's runs seen through another wiring: the current as the power the coil
    delivers (``io = −i``), and its flux measured with an offset (``psi + 0.1``)."""
    ds0 = vendor_data("saturating_inductor")
    recs = []
    for r, (t, X) in enumerate(fs.run_arrays(ds0, ["V", "i"])):
        psi = si.simulate(t, X[:, 0])
        recs.append(RunRecord(index=r, values={"V": X[:, 0], "io": -X[:, 1],
                                               "psi": psi + 0.1}))
    ds = records_to_dataset(recs, t, None, ["V", "io", "psi"],
                            attrs={"input_interpolation": "zero-order hold over each step"})
    kw = {"inputs": ["V"], "outputs": ["io", "psi"], "runs": [0, 1]}
    lin = fs.identify.LinearPHIdentifier(1, ports=[{"u": "V", "y": "io"}], offsets=True)
    lin.fit_dataset(ds, **kw)
    est = NonlinearPHIdentifier(linear=lin, validation_runs=0, max_iter=100).fit_dataset(ds, **kw)
    return ds, lin, est


def test_the_wiring_of_the_linear_fit_is_kept(coil):
    ds, lin, est = coil
    ref, sur = lin.to_surrogate(), est.to_surrogate()
    assert isinstance(ref, fs.PortedSystem) and isinstance(sur.system, fs.NonlinearPH)
    # power out: u_ph = −V; the offset's constant source is the second pH port (u_ph = 1);
    # psi is measured (no pH port behind it, Ty row 0)
    np.testing.assert_array_equal(sur.ports.Tu, [[-1.0], [0.0]])
    np.testing.assert_array_equal(sur.ports.cu, [0.0, 1.0])
    for f in ("Tu", "cu", "Ty", "input_names", "output_names", "input_units", "output_units"):
        assert np.array_equal(getattr(sur.ports, f), getattr(ref.ports, f)), f
    # the measured output's offset is learned through the source port: 0.1 (the data's) to
    # the fit's accuracy (measured 0.10004)
    assert sur.ports.cy[1] == pytest.approx(0.1, abs=2e-3)
    (t, X), = fs.run_arrays(ds, ["V", "io", "psi"], runs=[2])
    err = [np.linalg.norm(fs.simulate(s, t, X[:, :1]).y - X[:, 1:], axis=0)
           / np.linalg.norm(X[:, 1:], axis=0) for s in (ref, sur)]
    # held out: measured linear 9.1 % / 5.6 %, nonlinear 0.034 % / 0.021 % (io / psi); the
    # 1 % bound leaves room for the optimiser's path under other BLAS thread counts
    assert np.all(err[1] <= 0.01) and np.all(err[0] >= 0.03)


def test_start_is_the_linear_fit_in_energy_coordinates(coil):
    """The start reproduces the linear fit: same outputs (round-off of the change of
    coordinates), padded states uncoupled."""
    ds, lin, _ = coil
    start = linear_start(lin, 3)
    # x0 is learned where the linear fit learned it (here: the measured flux does not start at
    # zero, so the data do not start at rest)
    assert start.n_states == 3 and start.learn_x0 is ("x0" in lin.result_.fitted)
    assert not start.lin["G"][1:].any() and not start.lin["J"][1:].any()
    (t, X), = fs.run_arrays(ds, ["V", "io", "psi"], runs=[2])
    core = fs.LinearPH(start.lin["J"], start.lin["R"], np.eye(3), start.lin["G"],
                       P=start.lin["P"], S=start.lin["S"], N=start.lin["N"])
    padded = fs.PortedSystem(core, start.ports_for(start.Cm, start.Dm), start.lin["x0"])
    y, y_ref = fs.simulate(padded, t, X[:, :1]).y, fs.simulate(lin.to_surrogate(), t,
                                                               X[:, :1]).y
    # one change of coordinates and a few products: measured 1e-15 relative
    assert np.abs(y - y_ref).max() <= 1e-10 * np.abs(y_ref).max()
    with pytest.raises(NonlinearFitError, match="below the order"):
        linear_start(fs.identify.LinearPHIdentifier(2).fit(t, X[:, :1], X[:, 1:2]), 1)
    with pytest.raises(NonlinearFitError, match="fitted to inputs"):
        NonlinearPHIdentifier(linear=lin).fit_dataset(ds, inputs=["V"], outputs=["psi", "io"])


def test_turn_directions_integrate_a_ports_output():
    """A pendulum's linear part in energy coordinates, ``x̃ = (√k θ, p/√J)``: ``J̃ − R̃ =
    [[0, ω₀], [−ω₀, −r]]``, ``G̃ = (0, 1/√J)``; the coordinate whose rate is the output
    ``ω = G̃ᵀx̃`` is ``θ = x̃₁ / √k``, with ``ω₀ = √(k/J)``: one turn per 2π rad, 360°, 1 turn or
    60 (rpm over seconds)."""
    from fmu_surrogate.identify.nonlinear.start import turn_directions

    k, inertia, r = 4.9, 0.5, 1.0
    w0 = np.sqrt(k / inertia)
    A = np.array([[0.0, w0], [-w0, -r]])
    G = np.array([[0.0], [1.0 / np.sqrt(inertia)]])
    dirs = turn_directions(A, G)
    theta = np.array([1.0 / np.sqrt(k), 0.0])  # x̃ → θ
    # a 2 × 2 solve: round-off
    assert len(dirs) == 4
    for d, period in zip(dirs, (2 * np.pi, 360.0, 1.0, 60.0)):
        np.testing.assert_allclose(d, 2 * np.pi / period * theta, rtol=1e-14, atol=1e-15)
    # any linear part: (J̃ − R̃)ᵀ w = g̃_j for each port j (one period, 2π: the scale 1)
    rng = np.random.default_rng(0)
    A, G = rng.normal(size=(3, 3)), rng.normal(size=(3, 2))
    dirs = turn_directions(A, G, periods=(2 * np.pi,))
    assert len(dirs) == 2
    for j, d in enumerate(dirs):
        np.testing.assert_allclose(A.T @ d, G[:, j], rtol=1e-12, atol=1e-12)


def _spring_run(F0: float, F1: float, w: float, preload: float = 0.0, rest: bool = True,
                T: float = 20.0, K: int = 201) -> tuple:
    """A mass on a stiffening spring, ``q̈ = F − p − 0.6 q̇ − q − 2 q³`` (``p`` a preload), force
    ``F`` rising from ``F0`` to ``F1`` as ``(1 − cos wt) / 2``, velocity out, by scipy (rtol
    1e-10): from rest under its first force (``rest``: ``q₀ + 2 q₀³ = F0 − p``, a model
    initialised in steady state) or from ``q = 0``."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq

    t = np.linspace(0.0, T, K)

    def force(s):
        return F0 + (F1 - F0) * (1.0 - np.cos(w * s)) / 2.0

    q0 = brentq(lambda q: q + 2.0 * q ** 3 - F0 + preload, -5, 5, xtol=1e-15) if rest else 0.0
    sol = solve_ivp(lambda s, x: [x[1], force(s) - preload - 0.6 * x[1] - x[0] - 2.0 * x[0] ** 3],
                    (0.0, T), [q0, 0.0], t_eval=t, rtol=1e-10, atol=1e-12)
    return t, force(t)[:, None], sol.y[1][:, None]


def _is_ph(system) -> None:
    """``J`` skew, ``R ⪰ 0`` (to round-off), the energy's and dissipation's weights ``≥ 0``."""
    R = system.R
    assert np.array_equal(system.J, -system.J.T)
    assert np.linalg.eigvalsh(R).min() >= -1e-12 * max(1.0, np.abs(R).max())
    assert np.all(system.effort_function.weights >= 0) and np.all(system.dissipation.gains >= 0)


def _held_out_error(est, run) -> tuple[float, float, np.ndarray]:
    """The nonlinear and the linear fit's relative errors on ``run``, and the prediction."""
    t, u, y = run
    y_hat = est.predict(t, u)
    return (np.linalg.norm(y_hat - y) / np.linalg.norm(y),
            np.linalg.norm(est.linear_.predict(t, u) - y) / np.linalg.norm(y), y_hat)


def test_arrays_of_runs_started_at_rest_under_their_first_forces_start_the_model_so():
    """Arrays of runs of the stiffening spring, each at rest under its first force (0.5, 1,
    −0.8, 0.3 N; the last held out): the linear start takes the steady start (a constant source
    and each run at its equilibrium, :mod:`~fmu_surrogate.identify.linear.steady_start`), and
    the nonlinear fit keeps both: its model is that wiring with the data's columns."""
    runs = [_spring_run(*s) for s in [(0.5, 1.5, 0.5), (1.0, -0.5, 0.8), (-0.8, 0.8, 0.4),
                                      (0.3, 1.2, 0.9)]]
    est = NonlinearPHIdentifier(2, ridges=("quartic",), max_iter=20,
                                linear=fs.identify.LinearPHIdentifier(2)).fit(runs)
    assert est.linear_.initial_ == "equilibrium" and est.initial_ == "equilibrium"
    sur = est.to_surrogate()
    assert isinstance(sur, fs.PortedSystem) and isinstance(sur.system, fs.NonlinearPH)
    assert sur.initial == "equilibrium" and sur.input_names == ("u1",)
    # the force is the first pH port, the constant source the second
    np.testing.assert_array_equal(sur.ports.Tu, [[1.0], [0.0]])
    np.testing.assert_array_equal(sur.ports.cu, [0.0, 1.0])
    _is_ph(sur.system)
    run = _spring_run(-0.3, 1.4, 0.6)  # a force seen in no run
    err, err_lin, y_hat = _held_out_error(est, run)
    # measured 0.023 % against the linear start's 60 %: the model class holds the spring (a
    # quartic ridge, the constant source), 20 iterations and RK4 at the 0.1 s step leave that
    # much; 1 % leaves room for the optimiser's path on other machines
    assert err < 0.01 and err_lin > 0.2
    # at rest at the start, as the part (measured 1e-5 of a 0.36 m/s range)
    assert abs(y_hat[0, 0]) < 1e-3 * np.abs(run[2]).max()

    # the start itself: the linear fit in energy coordinates, padded, its source port wired
    start = linear_start(est.linear_, 3)
    assert start.steady and not start.bare and list(start.constant_ports) == [1]
    t = np.linspace(0.0, 20.0, 8001)  # a step of 2.5 ms: simulate's error below the bound
    u = np.interp(t, run[0], run[1][:, 0])[:, None]
    core = fs.LinearPH(start.lin["J"], start.lin["R"], np.eye(3), start.lin["G"],
                       P=start.lin["P"], S=start.lin["S"], N=start.lin["N"])
    padded = fs.PortedSystem(core, start.ports_for(start.Cm, start.Dm), start.lin["x0"],
                             initial="equilibrium")
    y, y_ref = fs.simulate(padded, t, u).y, est.linear_.predict(t, u)
    # against the linear fit's own prediction (its exact discretisation): simulate's error,
    # first order in the step here (measured 6.9e-3, 1.7e-3, 4.3e-4 of the range at 20, 5 and
    # 1.25 ms), so 2e-3 at 2.5 ms; a wrong wiring or start misses by percents
    assert np.abs(y - y_ref).max() <= 2e-3 * np.abs(y_ref).max()


def test_arrays_with_a_preload_start_from_a_linear_fit_with_offsets():
    """Arrays of runs of the spring under a 1 N preload, from ``q = 0`` at rest (the preload
    pulls it from the first sample on): a linear start with offsets fitted from a state
    carries the preload as a constant source, which the nonlinear fit keeps."""
    runs = [_spring_run(*s, preload=1.0, rest=False)
            for s in [(0.0, 1.5, 0.5), (0.0, -1.0, 0.8), (0.0, 2.0, 0.4), (0.0, 1.2, 0.9)]]
    lin = fs.identify.LinearPHIdentifier(2, offsets=True, initial="state")
    est = NonlinearPHIdentifier(2, ridges=("quartic",), max_iter=20, linear=lin).fit(runs)
    assert est.linear_.system_.n_inputs == 2 and est.initial_ == "state"
    sur = est.to_surrogate()
    np.testing.assert_array_equal(sur.ports.cu, [0.0, 1.0])
    _is_ph(sur.system)
    err, err_lin, _ = _held_out_error(est, _spring_run(0.0, -0.5, 0.6, preload=1.0, rest=False))
    # measured 0.11 % against the linear start's 47 % (the model class holds the spring and
    # the preload); 1 % leaves room for the optimiser's path on other machines
    assert err < 0.01 and err_lin > 0.2
    assert est.result_.validation_error < 0.01  # measured 0.048 %
