"""Nonlinear pH identification from input-output data only: a mass with a power-law damper
``c sign(v)|v|^(4/3)`` and a progressive spring ``k₁q + k₃q³``, force in, velocity out,
simulated with scipy (``mass_experiment``, tests/identify/conftest.py) — against the linear pH
fit of the same data."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.identify.nonlinear.estimator import NonlinearFitError, NonlinearPHIdentifier


@pytest.fixture(scope="module")
def fitted(mass_experiment):
    exps = [mass_experiment(s) for s in (1, 2, 3)]  # the last one held out
    est = NonlinearPHIdentifier(2, ridges=("quartic",), segment_length=25, max_iter=150)
    return est.fit(exps)


def test_identifies_the_nonlinear_mass_where_the_linear_fit_fails(fitted, mass_experiment):
    r = fitted.result_
    assert r.n_train == 2 and r.n_validation == 1
    # measured: linear 38.0 % train / 44.8 % held-out, nonlinear 0.20 % / 0.21 % (150 L-BFGS-B
    # iterations, ~20 s); the 2 % bound leaves room for round-off differences along the
    # optimiser's path (BLAS, thread counts)
    assert r.validation_error <= 0.02
    assert r.linear_validation_error >= 0.25
    # an experiment neither fit has seen, simulated by the structure-preserving scheme
    t, u, y = mass_experiment(7)
    y_nl = fitted.predict(t, u)
    y_lin = fs.simulate(fitted.linear_system_, t, u).y
    err_nl = np.linalg.norm(y_nl - y) / np.linalg.norm(y)
    err_lin = np.linalg.norm(y_lin - y) / np.linalg.norm(y)
    # measured 0.22 % against 30.7 %
    assert err_nl <= 0.02 and err_lin >= 10 * err_nl
    assert "held-out" in r.report()


def test_identified_model_is_passive_and_saved_exactly(fitted, tmp_path, mass_experiment):
    sys = fitted.to_surrogate()
    assert isinstance(sys, fs.NonlinearPH)
    assert np.all(sys.effort_function.weights >= 0) and np.all(sys.dissipation.gains >= 0)
    t, u, _ = mass_experiment(8)
    tr = fs.simulate(sys, t, u)
    # AVF balance: round-off and the Newton tolerance (measured 1.4e-15 of the energy scale)
    assert abs(tr.energy_residual) <= 1e-10 * tr.energy_scale
    back = fs.load(fs.save(sys, tmp_path / "nl.json"))
    assert np.array_equal(fs.simulate(back, t, u).y, tr.y)


def test_starts_where_the_linear_fit_ends(mass_experiment):
    exps = [mass_experiment(s, T=6.0) for s in (1, 2)]
    est = NonlinearPHIdentifier(2, segment_length=25, max_iter=0, validation_runs=1).fit(exps)
    r = est.result_
    # zero ridge weights and dissipation gains: the linear model in energy coordinates, the
    # same outputs up to the round-off of the change of coordinates (measured 8e-15 relative)
    assert np.all(est.system_.effort_function.weights == 0)
    assert np.all(est.system_.dissipation.gains == 0)
    assert r.train_error == pytest.approx(r.linear_train_error, rel=1e-9)
    assert r.validation_error == pytest.approx(r.linear_validation_error, rel=1e-9)


def test_fit_dataset_gives_a_drop_in_surrogate_with_the_names(mass_experiment):
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    runs = [mass_experiment(s, T=4.0) for s in (1, 2)]
    t = runs[0][0]
    recs = [RunRecord(index=i, values={"F": u[:, 0], "v": y[:, 0]})
            for i, (_, u, y) in enumerate(runs)]
    ds = records_to_dataset(recs, t, None, ["F", "v"])
    est = NonlinearPHIdentifier(2, max_iter=3).fit_dataset(ds, inputs=["F"], outputs=["v"])
    sur = est.to_surrogate()
    assert isinstance(sur, fs.PortedSystem) and isinstance(sur.system, fs.NonlinearPH)
    assert sur.input_names == ("F",) and sur.output_names == ("v",)
    # the linear start is LinearPHIdentifier(2).fit_dataset on the training run (the first)
    lin = fs.identify.LinearPHIdentifier(2).fit_dataset(ds, inputs=["F"], outputs=["v"],
                                                        runs=[0])
    same = NonlinearPHIdentifier(2, max_iter=3, linear=lin).fit_dataset(
        ds, inputs=["F"], outputs=["v"])
    assert np.array_equal(same.system_.J, est.system_.J)
    with pytest.raises(ValueError, match="at least one input and one output"):
        NonlinearPHIdentifier(2).fit_dataset(ds, inputs=["F"], outputs=[])


def test_settings_are_checked_at_fit(mass_experiment):
    t, u, y = mass_experiment(1, T=2.0)
    with pytest.raises(ValueError, match="ridges"):
        NonlinearPHIdentifier(ridges=("cubic",)).fit(t, u, y)
    with pytest.raises(fs.NotFittedError):
        NonlinearPHIdentifier().to_surrogate()
    with pytest.raises(NonlinearFitError, match="needs both u and y"):
        NonlinearPHIdentifier().fit(t, u)
    with pytest.raises(NonlinearFitError, match="max_time >= 0"):
        NonlinearPHIdentifier(max_time=-1.0).fit(t, u, y)
    from fmu_surrogate.identify import Experiment

    a = NonlinearPHIdentifier(max_iter=2, validation_runs=0).fit(Experiment.from_arrays(t, u, y))
    b = NonlinearPHIdentifier(max_iter=2, validation_runs=0).fit(t, u, y)
    assert np.array_equal(a.system_.J, b.system_.J)


def test_feedthrough_is_fitted_when_asked(mass_experiment):
    """``feedthrough=True`` adds ``P, S, N`` (W₀ = LLᵀ over states and ports) to the fit."""
    t, u, y = mass_experiment(1, T=6.0)
    y = y + 0.2 * u  # a direct path from force to the output
    est = NonlinearPHIdentifier(2, feedthrough=True, max_iter=15, validation_runs=0)
    sys = est.fit(t, u, y).to_surrogate()
    assert sys.P.shape == (2, 1) and sys.S.shape == (1, 1) and sys.S[0, 0] > 0
    W = sys.W
    assert np.linalg.eigvalsh(W).min() >= -1e-12 * np.abs(W).max()
    assert est.result_.train_error < est.result_.linear_train_error
    assert np.isnan(est.result_.validation_error)


@pytest.fixture(scope="module", params=["power_damper", "progressive_spring",
                                        "saturating_inductor"])
def vendor_fit(request, vendor_data):
    """The contract of a drop-in fit: the linear fit by its own ``fit_dataset`` on runs 0, 1,
    then the nonlinear one started from it on the same runs; run 2 (another input) held out."""
    from tests.identify.nonlinear.conftest import VENDOR

    name = request.param
    inp, out, _, _ = VENDOR[name]
    ds = vendor_data(name)
    lin = fs.identify.LinearPHIdentifier().fit_dataset(ds, inputs=[inp], outputs=[out],
                                                       runs=[0, 1])
    est = NonlinearPHIdentifier(n_states=None, linear=lin, validation_runs=0, max_iter=100)
    est.fit_dataset(ds, inputs=[inp], outputs=[out], runs=[0, 1])
    (t, X), = fs.run_arrays(ds, [inp, out], runs=[2])
    return name, lin, est, t, X[:, :1], X[:, 1:]


def _error(sur, t, u, y):
    return float(np.linalg.norm(fs.simulate(sur, t, u).y - y) / np.linalg.norm(y))


def test_vendor_fmus_within_two_percent_in_the_linear_wiring(vendor_fit):
    name, lin, est, t, u, y = vendor_fit
    sur, lin_sur = est.to_surrogate(), lin.to_surrogate()
    assert isinstance(sur, fs.PortedSystem) and isinstance(sur.system, fs.NonlinearPH)
    # the linear fit's external view: names, units, signs, source port (identity here: power
    # in, no offsets) and its order (at least 1)
    ref = lin_sur.ports if isinstance(lin_sur, fs.PortedSystem) else None
    assert sur.input_names == lin_sur.input_names and sur.output_names == lin_sur.output_names
    if ref is not None:
        assert np.array_equal(sur.ports.Tu, ref.Tu) and np.array_equal(sur.ports.cu, ref.cu)
        assert np.array_equal(sur.ports.Ty, ref.Ty) and sur.ports.input_units == ref.input_units
    # the linear fit's order, at least 1 — but the damper's static law leaves that one state
    # idle (no coupling, no ridge, no dissipation): removed, a static map
    assert sur.n_states == (0 if name == "power_damper" else max(lin.system_.n_states, 1))
    err, err_lin = _error(sur, t, u, y), _error(lin_sur, t, u, y)
    # measured with 100 iterations (default 300: the spring then reaches 0.01 %) on the
    # held-out run: damper 0.0002 %, spring 0.20 %, inductor 0.033 % against the linear fits'
    # 14.3 %, 6.3 %, 10.9 %; 2 % is the bound, far above what thread counts or BLAS
    # change along the optimiser's path
    assert err <= 0.02 and err_lin >= 0.05, (name, err, err_lin)


def test_vendor_surrogates_are_passive_on_random_inputs(vendor_fit):
    """``dH/dt ≤ yᵀu`` step by step on inputs the fit has not seen (twice the amplitude)."""
    name, _, est, t, u, _ = vendor_fit
    sur = est.to_surrogate()
    rng = np.random.default_rng(5)
    for _ in range(3):
        w = np.cumsum(rng.normal(size=u.shape), axis=0)
        w = 2.0 * np.abs(u).max() * (w - w.mean()) / np.abs(w - w.mean()).max()
        tr = fs.simulate(sur, t, w)
        scale = tr.energy_scale
        # the AVF balance to the Newton tolerance, so the step's ΔH is its supplied energy
        # minus a dissipation that is ≥ 0 by construction (measured ≤ 3e-15 of the scale)
        assert abs(tr.energy_residual) <= 1e-9 * scale
        assert np.diff(tr.dissipated).min() >= 0.0
        assert np.all(np.diff(tr.stored) <= np.diff(tr.supplied) + 1e-9 * scale), name


def _static_law_choice(run):
    """``select_model`` of a static law (order 0, with feedthrough) on the runs ``run(1)``,
    ``run(2)``, held out ``run(3)``."""
    from fmu_surrogate.identify.selection import select_model

    return select_model([run(1), run(2)], [run(3)], order=0, linear={"feedthrough": True},
                        nonlinear={"feedthrough": True})


def test_a_friction_damper_is_found_from_its_saturating_start():
    """Viscous plus smoothed dry friction, ``F = 0.5 v + 1.2 v / √(v² + 0.05²)``, a static law
    (order 0) of the class (a p = −1 term with δ = 0.05 and a linear one): the fit reaches it
    from the second family's start with δ learned.  With δ fixed at its start and p ≥ −0.9 the
    fit stayed at the linear model's 34 % held-out error."""
    t = np.arange(0.0, 10.0, 0.01)

    def run(seed):
        w = np.cumsum(np.random.default_rng(seed).normal(size=t.size))
        w = np.convolve(w, np.ones(20) / 20, "same")
        v = 1.5 * (w - w.mean()) / np.abs(w - w.mean()).max()
        return t, v[:, None], (0.5 * v + 1.2 * v / np.sqrt(v**2 + 0.05**2))[:, None]

    choice = _static_law_choice(run)
    # measured 2.4e-7 (relative RMS on the held-out run); 1e-4 leaves the optimiser's path
    # room on any BLAS, and is 3000 times below the linear model's 0.336
    assert choice.method == "nonlinear" and choice.nonlinear_error < 1e-4
    assert choice.linear_error > 0.3
    law = choice.estimator.system_.port_dissipation
    k = int(np.argmin(law.exponents))
    assert law.exponents[k] == pytest.approx(-1.0, abs=1e-3)
    # the bend of the law, in the input's units: δ / |m| = 0.05
    assert law.smoothing[k] / abs(law.directions[k, 0]) == pytest.approx(0.05, rel=1e-3)


def test_an_asymmetric_damper_is_found():
    """Rebound harder than compression: ``F = 0.3 v + 2 (v² + δ²)^(1/6) v (1 + 0.5 σ)``,
    ``σ = v/√(v² + δ²)`` (1.5 times the power-law force in rebound, 0.5 times in compression),
    a static law of the class: the asymmetry a = 0.5 is learned from its start at 0."""
    t = np.arange(0.0, 10.0, 0.01)

    def run(seed):
        w = np.cumsum(np.random.default_rng(seed).normal(size=t.size))
        w = np.convolve(w, np.ones(20) / 20, "same")
        v = 1.5 * (w - w.mean()) / np.abs(w - w.mean()).max()
        q = v**2 + 1e-6
        return t, v[:, None], (0.3 * v + 2.0 * q ** (1 / 6) * v * (1 + 0.5 * v / np.sqrt(q)))[:, None]

    choice = _static_law_choice(run)
    # measured 1.2e-7 (relative RMS, held out) against the linear model's 0.415
    assert choice.method == "nonlinear" and choice.nonlinear_error < 1e-4
    law = choice.estimator.system_.port_dissipation
    k = int(np.argmax(law.gains))
    assert law.asymmetry[k] == pytest.approx(0.5, abs=1e-4)
    assert law.exponents[k] == pytest.approx(1 / 3, abs=1e-4)


def test_a_damper_whose_force_sees_the_velocity_of_the_step_before(vendor_data):
    """The power damper's harvest with each force moved one sample later, ``F_k = law(v_{k−1})``
    and ``F_0 = 0`` (the FMU at rest before its first step): what a vendor damper whose force
    follows the velocity through a lag far below the step shows (a compressible oil volume),
    or one whose outputs are computed in doStep only."""
    ds = vendor_data("power_damper").copy(deep=True)
    F = ds["F"].values
    ds["F"].values = np.concatenate([np.zeros((F.shape[0], 1)), F[:, :-1]], axis=1)
    est = NonlinearPHIdentifier(n_states=None, validation_runs=0, max_iter=100)
    est.fit_dataset(ds, inputs=["v"], outputs=["F"], runs=[0, 1])
    assert est.delayed_feedthrough_ and est.delay_evidence_.delayed
    # the inputs' declared start value (v = 0): its force 0 matches the first samples, the
    # first inputs' force does not
    assert est.inputs_before_.tolist() == [0.0]
    sur = est.to_surrogate()
    assert sur.delayed_feedthrough
    (t, X), = fs.run_arrays(ds, ["v", "F"], runs=[2])
    err = _error(sur, t, X[:, :1], X[:, 1:])
    # the undelayed damper's fit reaches 2e-6 on this run (test above), the same law one sample
    # later 1.8e-6 (measured); a direct feedthrough misses by the velocity's change over a
    # step: 10.5 % (measured, converged in 8 iterations of 50 s in all; two iterations here,
    # each lowering the training cost); 1e-3 leaves room for the optimiser's path elsewhere
    assert err <= 1e-3
    direct = NonlinearPHIdentifier(n_states=None, validation_runs=0, max_iter=2,
                                   delayed_feedthrough=False)
    direct.fit_dataset(ds, inputs=["v"], outputs=["F"], runs=[0, 1])
    assert _error(direct.to_surrogate(), t, X[:, :1], X[:, 1:]) >= 20 * err


def test_an_instantaneous_damper_is_not_delayed(vendor_data):
    from fmu_surrogate.identify.delayed_feedthrough import detect_delayed_feedthrough

    runs = [(t, X[:, :1], X[:, 1:]) for t, X in fs.run_arrays(vendor_data("power_damper"),
                                                               ["v", "F"], runs=[0, 1])]
    ev = detect_delayed_feedthrough(runs)
    # measured ratio 10; the limit is 3
    assert not ev.delayed and ev.ratios[0] > 6


def test_a_damper_whose_outputs_are_computed_in_do_step(vendor_data):
    """power_damper_stepped: F at t_k is the law of v_{k−1}, at t_0 that of the velocity set at
    initialisation — the delay is found and the first inputs are what it sees before t_0."""
    from fmu_surrogate.benchmarks.vendor import power_damper

    ds = vendor_data("power_damper_stepped")
    est = NonlinearPHIdentifier(n_states=None, validation_runs=0, max_iter=100)
    est.fit_dataset(ds, inputs=["v"], outputs=["F"], runs=[0, 1])
    assert est.delayed_feedthrough_ and est.inputs_before_ is None
    sur = est.to_surrogate()
    (t, X), = fs.run_arrays(ds, ["v", "F"], runs=[2])
    # measured 8.4e-6 on the held-out run (the power damper's own: 2e-6)
    assert _error(sur, t, X[:, :1], X[:, 1:]) <= 1e-3
    # the law itself, read from the surrogate's outputs at its operating point: within 1e-3 of
    # the force at 1 m/s (measured 1.6e-5)
    v = np.linspace(-1.0, 1.0, 41)
    F = np.array([sur.outputs(sur.x0, [vi])[0] for vi in v])
    assert np.abs(F - power_damper.force(v)).max() <= 1e-3 * power_damper.force(1.0)


def test_max_iter_is_a_hard_budget_and_a_stalled_fit_stops(mass_experiment):
    """``max_iter`` Levenberg–Marquardt iterations at most; with the default budget the mass on
    a progressive spring and a power-law damper is fitted until its progress stalls (measured:
    51 iterations, cost 1.1e-8, structure-preserving training error 0.038 %; 100 iterations
    gave 1.9e-9 and the same 0.038 %: RK4 against the AVF scheme, not the fit, sets it)."""
    t, u, y = mass_experiment(1, T=6.0)
    short = NonlinearPHIdentifier(2, max_iter=3, validation_runs=0).fit(t, u, y).result_
    assert short.n_iter == 3 and short.cost_history.size == 4
    assert "max_iter" in short.stopping_reason
    full = NonlinearPHIdentifier(2, validation_runs=0).fit(t, u, y).result_
    assert full.n_iter < 100 and "fell by less" in full.stopping_reason
    # 0.1 %: 2.6 times the measured error, 20 times below the 2 %
    assert full.train_error <= 1e-3
    # each accepted step lowers the cost
    assert np.all(np.diff(full.cost_history) < 0)


def test_a_damper_recorded_in_mm_per_s_and_kn_is_found():
    """A car damper ``F = 3000 sign(v) |v|^(4/3)`` (SI) recorded as vendors do in mm/s and kN:
    the same power as in SI through a feedthrough 10⁶ times smaller.  The fit measures the ports
    in balanced units (``u / s``, ``y s`` of equal spread), so it finds the law as in SI; before,
    Levenberg's damping, set by the curvature of the tiny feedthrough's factor, left the first
    step no gain and the fit stopped at the linear model's 14.5 %."""
    from fmu_surrogate.fmu.signals.excitation import BandLimitedNoise

    t = np.arange(0.0, 2.0005, 0.001)

    def run(seed):
        v = BandLimitedNoise(f_high=5.0, duration=2.0, std=0.5, seed=seed)(t)  # m/s
        F = 3000.0 * np.sign(v) * np.abs(v) ** (4 / 3)  # N
        return t, (1e3 * v)[:, None], (1e-3 * F)[:, None]  # mm/s, kN

    choice = _static_law_choice(run)
    # measured 9.0e-6 (relative RMS, held out) against the linear model's 0.145 (1e-4 leaves
    # the optimiser's path room on any BLAS)
    assert choice.method == "nonlinear" and choice.nonlinear_error < 1e-4
    assert choice.linear_error > 0.1
    law = choice.estimator.system_.port_dissipation
    k = int(np.argmax(law.gains))
    assert law.exponents[k] == pytest.approx(1 / 3, abs=1e-3)


def test_an_orifice_in_bar_and_l_per_min_is_found():
    """A turbulent orifice to tank, ``Q = 10 sign(p) √|p| tanh(2 √(|p| / 2))`` (bar, l/min),
    harvested about 80 bar: its port carries some 3000 bar·l/min.  The feedthrough terms' gains
    are measured in that power; before, they moved by 0.004 per step, and the fit stopped after
    one at the linear model's error."""
    from fmu_surrogate.benchmarks.vendor.hydraulic import turbulent_flow
    from fmu_surrogate.fmu.signals.excitation import BandLimitedNoise

    t = np.arange(0.0, 1.0005, 0.01)

    def run(seed):
        p = 80.0 + BandLimitedNoise(f_high=10.0, duration=1.0, std=50.0, seed=seed)(t)
        return t, p[:, None], turbulent_flow(p)[:, None]

    choice = _static_law_choice(run)
    # measured 0.094 % (relative RMS, held out; 0.60 % when the fit stopped on a fall below 2x
    # in 10 iterations at 1 %) against the linear model's 21 %: the class has no tanh
    # transition (a power law |p|^(-1/2) smoothed near 0); 0.5 % leaves the optimiser's path
    # room on any BLAS
    assert choice.method == "nonlinear" and choice.nonlinear_error < 0.005
    assert choice.linear_error > 0.1
    law = choice.estimator.system_.port_dissipation
    k = int(np.argmax(law.gains))
    # the turbulent square root, p = -1/2 (measured -0.51: the transition bends it)
    assert law.exponents[k] == pytest.approx(-0.5, abs=0.05)


def test_progress_shows_a_bar_over_each_fit_and_changes_nothing(mass_experiment, capsys):
    t, u, y = mass_experiment(1, T=4.0)
    quiet = NonlinearPHIdentifier(2, max_iter=4, validation_runs=0).fit(t, u, y)
    capsys.readouterr()
    shown = NonlinearPHIdentifier(2, max_iter=4, validation_runs=0, progress=True).fit(t, u, y)
    err = capsys.readouterr().err
    assert "NonlinearPH fit (order 2)" in err and "cost=" in err
    # the bar only reports: the same iterations to the last digit
    np.testing.assert_array_equal(shown.result_.cost_history, quiet.result_.cost_history)


def test_a_fit_in_other_units_takes_the_same_steps(mass_experiment):
    """The mass on its cubic spring with the velocity in mm/s instead of m/s (its energy and the
    states' spread² 1000 times larger): the states, the ridges' and losses' directions and the
    losses' gains measured in the states' spread, the fit takes the same steps.  Measured
    after five iterations: 5.19 % in m/s, 6.10 % in mm/s (the linear starts differ by 1e-5
    relative, and the first steps by 1.5 %); with those variables in their own units, 5.56 %
    and 35.8 % (stalled at the linear start's cost)."""
    runs = [mass_experiment(s) for s in (1, 2, 3)]
    err = [NonlinearPHIdentifier(2, max_iter=5, validation_runs=1).fit(
        [(t, u, c * y) for t, u, y in runs]).result_.train_error for c in (1.0, 1000.0)]
    assert err[0] < 0.08  # the fit moves in SI: from the linear start's 38 %
    # the same path up to the starts' difference: 1.5× covers the measured 1.17×, and is far
    # below the 6.4× of the path in their own units
    assert err[1] < 1.5 * err[0]


def hanging_mass(seed, scale, T=20.0, dt=0.02, released=False):
    """The unit mass of ``mass_experiment`` hanging on its spring ``q + 2 q³`` under the weight
    2 N, at rest at the spring's deflection ``q_e`` (``q_e + 2 q_e³ = −2``; ``released``: at
    ``q = 0``, falling) when the force ``scale`` × a random multisine (0.05–0.6 Hz) starts;
    velocity out (scipy, DOP853)."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq

    qe = 0.0 if released else brentq(lambda q: q + 2 * q ** 3 + 2.0, -5, 5)
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T + dt / 2, dt)
    f, ph, a = rng.uniform(0.05, 0.6, 6), rng.uniform(0, 2 * np.pi, 6), rng.uniform(0.5, 1, 6)

    def F(s):
        return scale * (np.sin(2 * np.pi * np.multiply.outer(s, f) + ph) @ a) / a.sum()

    def rhs(s, x):
        damper = 0.5 * np.sign(x[1]) * abs(x[1]) ** (4 / 3)
        return [x[1], F(s) - 2.0 - damper - x[0] - 2 * x[0] ** 3]

    sol = solve_ivp(rhs, (0, T), [qe, 0.0], t_eval=t, rtol=1e-10, atol=1e-12, method="DOP853")
    return t, F(t)[:, None], sol.y[1][:, None]


def test_a_mass_at_rest_under_a_static_load_is_found():
    """About the load's deflection the spring's force is not odd (``3 k₃ q_e δ²``): symmetric
    ridges missed it (8.7 % on the training runs from the CLI), a preloaded ridge has it."""
    exps = [hanging_mass(s, a, dt=0.04) for s, a in ((1, 1.0), (2, 2.5), (3, 4.0), (4, 3.0))]
    est = NonlinearPHIdentifier(2).fit(exps)  # inputs linear between samples (default)
    eff = est.system_.effort_function
    assert np.any(eff.shifts != 0)
    # measured 0.044 % held out (linear 44 %), 0.093 % on a run neither fit has seen (sampled
    # at 20 ms through the CLI's defaults: 0.14 % and 0.088 %; with symmetric ridges 2.5 % and
    # 4.7 %); 1 % leaves room for the optimiser's path on other machines
    assert est.result_.validation_error < 0.01
    t, u, y = hanging_mass(7, 3.5, dt=0.04)
    assert np.abs(est.predict(t, u) - y).max() / np.abs(y).max() < 0.01


def _rest_started_run(F0, amp, seed):
    """``q̈ = F + 10 − 2 v − 40 q − 100 q³`` (a preloaded mass on a hardening spring), started
    at rest where the spring holds ``F(0) + 10`` (a vendor's steady-state initialisation), a
    multisine about ``F(0)`` (0.2–3 Hz) held over steps of 10 ms for 10 s: scipy's DOP853 step
    by step (rtol 1e-11); velocity and acceleration out."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq

    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 10.005, 0.01)
    f, ph, a = rng.uniform(0.2, 3.0, 6), rng.uniform(0, 2 * np.pi, 6), rng.uniform(0.5, 1, 6)
    F = F0 + amp * (np.sin(2 * np.pi * np.multiply.outer(t, f) + ph) - np.sin(ph)) @ a / a.sum()

    def rhs(_s, z, force):
        return [z[1], force - 2.0 * z[1] - 40.0 * z[0] - 100.0 * z[0] ** 3]

    x = np.array([brentq(lambda q: 40.0 * q + 100.0 * q ** 3 - F0 - 10.0, -5, 5, xtol=1e-15),
                  0.0])
    X = [x]
    for k in range(t.size - 1):
        x = solve_ivp(rhs, (0.0, 0.01), x, args=(F[k] + 10.0,), rtol=1e-11, atol=1e-13,
                      method="DOP853").y[:, -1]
        X.append(x)
    X = np.array(X)
    return t, F, np.column_stack([X[:, 1], F + 10.0 - 2.0 * X[:, 1] - 40.0 * X[:, 0]
                                  - 100.0 * X[:, 0] ** 3])


def test_runs_started_at_rest_under_their_first_forces_start_the_nonlinear_model_so():
    """The runs start at rest under F(0) = 3, −5, 8, 0, −6 N (and 1 N held out): the linear
    start finds the steady start (:mod:`~fmu_surrogate.identify.linear.steady_start`), the
    nonlinear fit frees each run's first state, and the surrogate starts at its equilibrium of
    the first force.  From a state (forced) the same fit
    missed the held-out run by 8 % in 52 s; from the equilibria 0.08 % in 9 s."""
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    specs = [(3.0, 5.0, 1), (-5.0, 8.0, 2), (8.0, 10.0, 3), (0.0, 10.0, 4), (-6.0, 6.0, 5)]
    runs = [_rest_started_run(*s) for s in specs]
    ds = records_to_dataset([RunRecord(index=i, values={"F": F, "v": y[:, 0], "a": y[:, 1]})
                             for i, (_t, F, y) in enumerate(runs)], runs[0][0], None,
                            ["F", "v", "a"],
                            attrs={"input_interpolation": "zero-order hold over each step"})
    for name, unit, causality in (("F", "N", "input"), ("v", "m/s", "output"),
                                  ("a", "m/s2", "output")):
        ds[name].attrs.update(units=unit, causality=causality)
    est = NonlinearPHIdentifier(2).fit_dataset(ds, inputs=["F"], outputs=["v", "a"])
    sur = est.to_surrogate()
    assert est.initial_ == "equilibrium" and sur.initial == "equilibrium"
    t, F, y = _rest_started_run(1.0, 9.0, 6)
    y_hat = fs.simulate(sur, t, F[:, None]).y
    err = np.linalg.norm(y_hat - y, axis=0) / np.linalg.norm(y, axis=0)
    # measured 0.080 % and 0.079 %: the model class holds the mass (a quartic ridge, a constant
    # source); 1 % leaves room for the optimiser's path on other machines
    assert err.max() < 0.01
    # at rest at the start: the velocity and the acceleration (measured 2e-7 and 8e-6, of
    # ranges 1.2 m/s and 30 m/s²), as the part itself
    assert abs(y_hat[0, 0]) < 1e-3 * np.abs(y[:, 0]).max()
    assert abs(y_hat[0, 1]) < 1e-3 * np.abs(y[:, 1]).max()
