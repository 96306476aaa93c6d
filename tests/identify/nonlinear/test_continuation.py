"""The continuation of a nonlinear fit that misses: over the excitation levels of the harvest, or
along the data from the linear model's outputs (identify/nonlinear/continuation.py)."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.nonlinear.continuation import (
    CONTINUATION_COST,
    HOMOTOPY_STAGES,
    excitation_levels,
    level_stages,
    small_signal_start,
)
from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier
from fmu_surrogate.identify.order_search import LOW_ORDER_COST


def test_levels_are_the_inputs_spread_relative_to_the_pooled_one():
    square = np.array([1.0, -1.0, 1.0, -1.0])
    const = np.full(4, 3.0)  # an input that never varies (a supply) does not count
    a = np.column_stack([square, const, 0.5 * square])
    b = np.column_stack([2.0 * square, const, 0.5 * square])
    levels = excitation_levels([a, b])
    # pooled spreads: first input √((4·1 + 4·4)/8) = √2.5, third 0.5 (equal in both runs)
    expected = np.sqrt(np.array([(1 / 2.5 + 1) / 2, (4 / 2.5 + 1) / 2]))
    np.testing.assert_allclose(levels, expected, rtol=1e-14)  # exact arithmetic up to round-off


def test_levels_of_inputs_that_never_vary_are_one():
    np.testing.assert_array_equal(excitation_levels([np.ones((3, 2)), np.ones((5, 2))]), [1, 1])


def test_stages_climb_the_bands_of_levels():
    levels = np.array([1.0, 3.0, 1.2, 2.0, 10.0])
    # bands (step 1.5): {1.0, 1.2}, {2.0, 3.0}, {10}
    stages = level_stages(levels)
    assert [s.tolist() for s in stages] == [[0, 2], [0, 1, 2, 3], [0, 1, 2, 3, 4]]
    # at most two stages: the upper bands merge
    stages = level_stages(levels, max_stages=2)
    assert [s.tolist() for s in stages] == [[0, 2], [0, 1, 2, 3, 4]]


def test_runs_of_one_level_are_one_stage():
    stages = level_stages(np.array([1.0, 1.4, 1.2]))
    assert [s.tolist() for s in stages] == [[0, 1, 2]]


def _mass_dataset(k: float, seeds=(1, 2), dt: float = 0.01, T: float = 10.0):
    """A mass (1 kg) on a spring ``k`` with a damper (0.4 N·s/m) from rest, a force held over
    each step (noise below 3 Hz), velocity and position out, sampled exactly (zero-order
    hold)."""
    from scipy.linalg import expm
    from scipy.signal import butter, lfilter

    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    t = np.arange(0.0, T + dt / 2, dt)
    M = np.zeros((3, 3))
    M[:2, :2], M[0, 2] = [[-0.4, -k], [1.0, 0.0]], 1.0  # x = (v, q), u = F
    E = expm(M * dt)
    recs = []
    for i, seed in enumerate(seeds):
        b, a = butter(2, 3.0 * 2 * dt)
        F = lfilter(b, a, np.random.default_rng(seed).standard_normal(t.size))
        x, X = np.zeros(2), [np.zeros(2)]
        for f in F[:-1]:
            x = E[:2, :2] @ x + E[:2, 2] * f
            X.append(x)
        X = np.array(X)
        recs.append(RunRecord(index=i, values={"F": F, "v": X[:, 0], "q": X[:, 1]}))
    ds = records_to_dataset(recs, t, None, ["F", "v", "q"],
                            attrs={"input_interpolation": "zero-order hold over each step"})
    return ds


def test_the_small_signal_start_is_the_linear_model_of_the_runs_given():
    """A linear start fitted to another mass (spring 9 N/m) in the wiring force → velocity,
    position measured; identified again on the runs of a mass with a 4 N/m spring, in the same
    ports and coordinates, it reproduces them (the first stage of the continuation)."""
    from fmu_surrogate.identify import LinearPHIdentifier
    from fmu_surrogate.identify.nonlinear.start import linear_start
    from fmu_surrogate.ph import LinearPH, PortedSystem, simulate

    ports = [{"u": "F", "y": "v"}]
    other = LinearPHIdentifier(2, ports=ports).fit_dataset(
        _mass_dataset(9.0), inputs=["F"], outputs=["v", "q"])
    start = linear_start(other, 2)
    ds = _mass_dataset(4.0, seeds=(3, 4))
    t = ds["time"].values
    runs = [(t, start.port_inputs(ds["F"].isel(run=i).values[:, None]),
             np.column_stack([ds[o].isel(run=i).values for o in ("v", "q")]), "zoh")
            for i in range(2)]

    def miss(st):
        lin = st.lin
        core = LinearPH(lin["J"], lin["R"], np.eye(2), lin["G"], P=lin["P"], S=lin["S"],
                        N=lin["N"])
        sur = PortedSystem(core, st.ports_for(st.Cm, st.Dm), lin["x0"])
        y = simulate(sur, t, ds["F"].isel(run=1).values, hold="zoh").y
        return np.abs(y - runs[1][2]).max(axis=0) / np.abs(runs[1][2]).max(axis=0)

    low = small_signal_start(start, runs, False, False, NonlinearPHIdentifier())
    assert low is not None and low.ports is start.ports
    assert miss(start).max() > 0.3  # measured 1.27: the other spring
    # exact samples of the same model class: subspace and Levenberg–Marquardt end at the
    # fit's stopping tolerance (measured 1.3e-8); 1e-6 leaves room for BLAS and the stops
    assert miss(low).max() < 1e-6
    # the core stays a pH system in energy coordinates: J skew, R PSD
    np.testing.assert_array_equal(low.lin["J"], -low.lin["J"].T)
    assert np.linalg.eigvalsh(low.lin["R"]).min() >= -1e-12


def _quarter_car(std: float, seed: int, T: float = 2.0, dt: float = 0.004) -> tuple:
    """``(t, F, v)``: a quarter car (body 300 kg, wheel 40 kg) whose suspension spring
    ``k d (1 + (d/0.05)²)`` and tyre ``k_t x (1 + (x/0.01)²)`` stiffen with the deflection,
    driven from rest by a force on the body (noise below 5 Hz of standard deviation ``std``,
    held over each step), its body velocity out; RK4 at ten substeps per step."""
    from scipy.signal import butter, lfilter

    t = np.arange(0.0, T + dt / 2, dt)
    b, a = butter(2, 5.0 * 2 * dt)
    F = lfilter(b, a, np.random.default_rng(seed).standard_normal(t.size))
    F *= std / F.std()
    F[0] = 0.0

    def f(x, u):
        d, xw = x[0] - x[2], x[2]
        fs = 2e4 * d * (1 + (d / 0.05) ** 2) + 1500.0 * (x[1] - x[3])
        ft = 2e5 * xw * (1 + (xw / 0.01) ** 2) + 100.0 * x[3]
        return np.array([x[1], (u - fs) / 300.0, x[3], (fs - ft) / 40.0])

    x, v, h = np.zeros(4), [0.0], dt / 10
    for k in range(t.size - 1):
        for _ in range(10):
            k1 = f(x, F[k])
            k2 = f(x + h / 2 * k1, F[k])
            k3 = f(x + h / 2 * k2, F[k])
            k4 = f(x + h * k3, F[k])
            x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        v.append(x[1])
    return t, F[:, None], np.array(v)[:, None]


def test_a_quarter_car_is_found_by_climbing_the_levels_of_its_runs():
    """Runs at 400 and 2000 N (the suspension stiffening up to 2.3×), one held out at 1200 N."""
    from fmu_surrogate.ph import simulate

    runs = [_quarter_car(s, i + 1) for i, s in enumerate((400.0, 2000.0, 1200.0))]
    est = NonlinearPHIdentifier(4).fit(runs)
    assert "2 excitation levels climbed" in est.result_.stopping_reason
    t, F, v = runs[-1]
    err = np.linalg.norm(simulate(est.system_, t, F, est.x0_, hold="zoh").y - v) / \
        np.linalg.norm(v)
    assert err < 0.05  # measured 2.0 %; one fit from the linear start over both runs: 69 %


def test_a_quarter_car_at_one_level_is_found():
    """One run at 2000 N (the suspension stiffening up to 2.3×), held out at 1200 N: no levels
    to climb.  The one fit from the linear start crosses its valley (it stops only when its
    cost falls by less than 1.1× in 10 iterations there, gauss_newton.STALL_BAND) to a cost
    just below CONTINUATION_COST, so the path along the data is mostly not needed (its steps
    are tested with stand-in fits below)."""
    from fmu_surrogate.ph import simulate

    runs = [_quarter_car(s, i + 1, T=1.5) for i, s in enumerate((2000.0, 1200.0))]
    est = NonlinearPHIdentifier(4).fit(runs)
    # the one fit ends at 9.9e-5, 1 % below CONTINUATION_COST: under another BLAS the path along
    # the data may run instead (it ends at 1.3e-4, 3.1 % held out); either stays within 2x of it
    assert est.result_.cost_history[-1] < 2 * CONTINUATION_COST
    t, F, v = runs[-1]
    err = np.linalg.norm(simulate(est.system_, t, F, est.x0_, hold="zoh").y - v) / \
        np.linalg.norm(v)
    # measured 3.9 % (training cost 9.9e-5 after 73 iterations; when the fit stopped on a fall
    # below 2x in 10 iterations: 58 %, and 3.1 % along the data); 8 % leaves room for the
    # optimiser's path under other BLAS thread counts
    assert err < 0.08


def _stand_in_homotopy(monkeypatch, y_lin, ridges=("quartic", "logcosh", "periodic", "gap"),
                       missed=0.08, simulated=lambda fit: 0.0, rescue=None):
    """:func:`optimise_continued` on one run (one level) with stand-in fits: the direct fit
    misses (cost ``missed``), every later one reaches 1e-6; the linear core's outputs are
    ``y_lin`` (an exception instance: raised); the energy's ``ridges`` (with a periodic and a
    gap one, no second fit with either); ``simulated(fit)`` the relative error of a fit's model
    simulated through the training runs; ``rescue`` the estimator's ``max_rescue_cost``.
    Returns the result, the direct fit and the targets each later fit was given."""
    from dataclasses import dataclass
    from types import SimpleNamespace

    import fmu_surrogate.identify.nonlinear.continuation as cont

    @dataclass
    class Fit:  # what the continuation reads of an Optimised
        costs: np.ndarray
        n_iter: int
        reason: str
        theta: int = 50  # here: the segments' length the fit had

    direct = Fit(np.array([0.5, missed]), 1, "stalled", 50)
    targets = []

    def optimise(est, start, train, *args, warm=None, **kw):
        targets.append((train[0][2], tuple(est.ridges)))
        return direct if len(targets) == 1 else Fit(np.array([1e-6]), 3, "met",
                                                    est.segment_length)

    def simulate(*args, **kw):
        if isinstance(y_lin, Exception):
            raise y_lin
        return SimpleNamespace(y=y_lin)

    monkeypatch.setattr(cont, "optimise", optimise)
    monkeypatch.setattr(cont, "surrogate_of", lambda fit, start, theta, delayed: fit)
    monkeypatch.setattr(cont, "relative_error", lambda fit, runs: simulated(fit))
    monkeypatch.setattr(cont, "simulate", simulate)
    t, u, y = np.arange(4.0), np.ones((4, 1)), np.full((4, 1), 8.0)
    out = cont.optimise_continued(NonlinearPHIdentifier(2, ridges=ridges,
                                                        max_rescue_cost=rescue),
                                  SimpleNamespace(n_states=2),
                                  [(t, u, y, "zoh")], False, 0, law_inputs=[u])
    return out, direct, targets


def test_the_homotopy_fits_the_blends_of_the_linear_outputs_and_the_data(monkeypatch):
    out, _, targets = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)))
    # the direct fit, the linear core on the data, then y_lin + (k/8)(y − y_lin) for k = 1..8:
    # here k (exact: eighths of 8)
    assert len(targets) == 2 + HOMOTOPY_STAGES
    for k, (target, _) in enumerate(targets[2:], start=1):
        np.testing.assert_array_equal(target, np.full((4, 1), float(k)))
    assert "after 8 steps from the linear model's outputs to the data (one fit to all runs: " \
           "cost 0.08, here 1e-06)" in out.reason


def test_a_linear_core_that_cannot_be_simulated_keeps_the_direct_fit(monkeypatch):
    from fmu_surrogate.errors import FmuSurrogateError

    for y_lin in (np.full((4, 1), np.nan), FmuSurrogateError("no step")):
        out, direct, targets = _stand_in_homotopy(monkeypatch, y_lin)
        assert out is direct and len(targets) == 2  # the direct fit and the linear core only


def test_a_fit_above_the_rescue_cost_is_kept_as_it_is(monkeypatch):
    # an order the search follows by a higher one: a direct fit that explains less than half its
    # outputs (cost 0.85) gets no continuation, ridge, short segments or contact (one fit), and
    # says why; one at 0.3 (a pendulum's 0.35 was rescued) still gets them all
    out, direct, targets = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)), missed=0.85,
                                              rescue=LOW_ORDER_COST)
    assert len(targets) == 1 and out.costs is direct.costs
    assert out.reason == "stalled; not rescued: the cost above 0.5 (an order too low)"
    out, _, targets = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)), missed=0.3,
                                         rescue=LOW_ORDER_COST)
    assert len(targets) == 2 + HOMOTOPY_STAGES and out.costs[-1] == 1e-6


def test_a_fit_that_misses_by_far_is_run_again_with_a_periodic_ridge(monkeypatch):
    """The convex fit ends at 0.08 (the linear core's outputs cannot be simulated: no homotopy),
    far above TURNING_COST: the whole fit again with a periodic ridge added, whose direct fit
    meets; one at 1e-3 (a few percent: short of a member of the class) is kept as it is."""
    out, _, targets = _stand_in_homotopy(monkeypatch, np.full((4, 1), np.nan),
                                         ridges=("quartic", "logcosh"))
    assert [k for _, k in targets] == [("quartic", "logcosh"), (), 
                                       ("quartic", "logcosh", "periodic")]
    assert out.costs[-1] == 1e-6
    assert out.reason == "met; with a periodic ridge (without: cost 0.08)"
    out, direct, targets = _stand_in_homotopy(monkeypatch, np.full((4, 1), np.nan),
                                              ridges=("quartic", "logcosh"), missed=1e-3)
    assert out is direct and len(targets) == 2


def test_a_fit_that_misses_by_far_with_a_periodic_ridge_is_run_again_with_end_stops(
        monkeypatch):
    """The fit with a periodic ridge among its own still ends at 0.08: the whole fit again with
    a gap ridge added (end stops), whose direct fit meets; the reason says which was added."""
    out, _, targets = _stand_in_homotopy(monkeypatch, np.full((4, 1), np.nan),
                                         ridges=("quartic", "logcosh", "periodic"))
    assert [k for _, k in targets] == [("quartic", "logcosh", "periodic"), (),
                                       ("quartic", "logcosh", "periodic", "gap")]
    assert out.costs[-1] == 1e-6
    assert out.reason == "met; with an end-stop (gap) ridge (without: cost 0.08)"
    # its model simulated misses the runs (50 %), on short segments less (10 %): the fit on
    # short segments carries the gap ridge, and its reason says so
    # (then the whole fit with a damper in the contact too, which misses them as much: not
    # kept)
    out, _, targets = _stand_in_homotopy(monkeypatch, np.full((4, 1), np.nan),
                                         ridges=("quartic", "logcosh", "periodic"),
                                         simulated=lambda fit: 0.5 if fit.theta == 50 else 0.1)
    kinds = [k for _, k in targets]
    gap = kinds.index(("quartic", "logcosh", "periodic", "gap"))
    assert ("quartic", "logcosh", "periodic", "contact") in kinds[gap + 1:] and out.theta == 10
    assert out.reason.endswith("here 0.1); with an end-stop (gap) ridge")


def test_a_fit_that_misses_its_runs_simulated_is_run_again_on_short_segments(monkeypatch):
    """The fit on segments of 50 steps meets them (cost 1e-6 after the homotopy) but its model
    simulated through the training runs misses them by 47.5 % (as the Duffing oscillator's
    below did): the whole fit again on segments of SHORT_SEGMENT steps, kept where
    its model misses them by less; a fit whose model meets them pays nothing."""
    from fmu_surrogate.identify.nonlinear.continuation import SHORT_ERROR, SHORT_SEGMENT

    out, _, targets = _stand_in_homotopy(
        monkeypatch, np.zeros((4, 1)), ridges=("quartic", "logcosh", "periodic"),
        simulated=lambda fit: 0.475 if fit.theta == 50 else 0.146)
    assert out.theta == SHORT_SEGMENT  # the fit on short segments
    # the homotopy, then one fit on short segments (its stand-in meets at once)
    assert len(targets) == 2 + HOMOTOPY_STAGES + 1
    assert out.reason.endswith(f"on segments of {SHORT_SEGMENT} steps (on 50: the training "
                               "runs missed by 0.475 RMS, here 0.146)")
    for worse in (0.475, 0.6):  # no better on short segments: the first fit stays
        out, _, targets = _stand_in_homotopy(
            monkeypatch, np.zeros((4, 1)), ridges=("quartic", "logcosh", "periodic"),
            simulated=lambda fit, w=worse: 0.475 if fit.theta == 50 else w)
        assert out.theta == 50 and len(targets) == 2 + HOMOTOPY_STAGES + 1
    out, _, targets = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)),
                                         simulated=lambda fit: SHORT_ERROR)
    assert out.theta == 50 and len(targets) == 2 + HOMOTOPY_STAGES  # met: no second fit


def test_a_gap_fit_that_misses_its_runs_is_run_again_with_a_damper_in_the_contact(monkeypatch):
    """The fit with a gap ridge meets its segments but its model misses the training runs by
    20 % (a damped contact): the whole fit again with a "contact" ridge added to the
    estimator's, kept where its model misses them by less; a fit with the contact already, or
    one whose model meets the runs, pays nothing more."""
    simulated = lambda fit: 0.2 if fit.theta == 50 else 0.4
    out, _, targets = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)), ridges=("gap",),
                                         simulated=simulated)
    kinds = [k for _, k in targets]
    assert kinds[-1] == ("gap", "contact") and ("gap",) in kinds
    assert out.theta == 50 and "contact" not in out.reason  # the contact's fit missed more

    import fmu_surrogate.identify.nonlinear.continuation as cont

    with_contact = [0.003]

    def contact_error(fit):  # the stand-in fits with the contact's ridge miss by 0.3 %
        return with_contact[0] if getattr(fit, "contact", False) else 0.2

    original = cont.optimise_continued

    def marked(est, *args, **kw):
        out = original(est, *args, **kw)
        if "contact" in est.ridges:
            out.contact = True
        return out

    monkeypatch.setattr(cont, "optimise_continued", marked)
    out, _, targets = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)), ridges=("gap",),
                                         simulated=contact_error)
    assert out.reason.endswith("with a damper in the contact (without: the training runs "
                               "missed by 0.2 RMS, here 0.003)")
    assert [k for _, k in targets].count(("gap", "contact")) > 0
    with_contact[0] = 0.15  # less, but not CONTACT_GAIN times less: the gap's model stays
    out, _, _ = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)), ridges=("gap",),
                                   simulated=contact_error)
    assert "contact" not in out.reason
    for ridges, sim in ((("gap", "contact"), 0.2), (("gap",), 0.005)):  # nothing more
        _, _, targets = _stand_in_homotopy(monkeypatch, np.zeros((4, 1)), ridges=ridges,
                                           simulated=lambda fit, v=sim: v)
        assert all(k == ridges or k == () for _, k in targets)


def _pendulum(peak: float, seed: int, T: float = 10.0, dt: float = 0.02) -> tuple:
    """``(t, τ, ω)``: a pendulum on a joint (inertia 0.5 kg m², ``m g l`` = 4.9 N m, viscous
    friction 0.5 N m s) driven from rest by a multisine torque (0.1–2 Hz, ``peak`` N m) held
    over each step, its angular velocity out (scipy at 1e-10)."""
    from scipy.integrate import solve_ivp

    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T + dt / 2, dt)
    f = np.arange(1, 21) / T
    tau = np.cos(2 * np.pi * f[:, None] * t[None] + rng.uniform(0, 2 * np.pi, f.size)[:, None])
    tau = peak * tau.sum(axis=0) / np.abs(tau.sum(axis=0)).max()

    def rhs(s, x):
        u = tau[min(int(s / dt * (1 + 1e-12)), t.size - 1)]
        return [x[1], (u - 0.5 * x[1]) / 0.5 - 9.8 * np.sin(x[0])]

    sol = solve_ivp(rhs, (0.0, T), [0.0, 0.0], t_eval=t, rtol=1e-10, atol=1e-10, max_step=dt)
    return t, tau[:, None], sol.y[1][:, None]


def test_a_pendulum_that_turns_over_gets_a_periodic_energy():
    """Runs at 3, 7 and 12 N m (the largest turns it over once), held out at 10 N m: the energy's
    convex ridges miss (training cost 0.37), so the fit runs again with a periodic ridge, which
    takes the whole form along the angle: ``H = ½ J ω² + α (1 − cos θ)`` with ``α`` = m g l."""
    from fmu_surrogate.ph import simulate

    runs = [_pendulum(peak, seed) for seed, peak in enumerate((3.0, 7.0, 12.0, 10.0), start=1)]
    est = NonlinearPHIdentifier(2, input_hold="zoh").fit(runs)
    assert "with a periodic ridge" in est.result_.stopping_reason
    t, tau, w = runs[-1]
    err = np.linalg.norm(simulate(est.system_, t, tau, est.x0_, hold="zoh").y - w) / \
        np.linalg.norm(w)
    # measured 0.091 % sampled at 20 ms (0.028 % at 10 ms, in 83 s instead of 55 s; the convex
    # energy alone: a training cost of 0.37); 0.5 % leaves the optimiser's path room on any BLAS
    assert err < 5e-3
    eff = est.system_.effort_function
    k = eff.kinds.index("periodic")
    # its share of the form is whole (σ = α |w|² = 1 at the bound: measured 1 − 2e-14) and its
    # weight the pendulum's m g l in the port's units (measured 4.922 against 4.9)
    assert eff.weights[k] * eff.directions[k] @ eff.directions[k] == pytest.approx(1.0, abs=1e-3)
    assert eff.weights[k] == pytest.approx(4.9, rel=0.02)


@pytest.mark.slow
def test_a_duffing_oscillator_whose_fit_drifts_between_segments_is_fitted_on_short_ones(
        duffing_experiment):
    """The Duffing oscillator of docs/design.md §5 (``y'' + 2.151 y' + 10 y + 1e5 y³ = u``,
    stiffening 30× over its runs; scipy under band-limited noise of 10 and 2, held out at 5;
    displacement, velocity and acceleration out) at order 2: on segments of 50 steps the fit
    meets each segment (cost 9.6e-4) while its model simulated through the runs misses them by
    47.5 % and the held-out run by 88 %; on short segments 14.6 % and 7.6 %."""
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    outs, recs = ["y", "v", "a"], []
    for i, (seed, std) in enumerate(((1, 10.0), (2, 2.0), (3, 5.0))):
        t, u, y = duffing_experiment(seed, std, f_high=5.0)
        recs.append(RunRecord(index=i, values={"u": u[:, 0], **dict(zip(outs, y.T))}))
    ds = records_to_dataset(recs, t, None, ["u", *outs],
                            attrs={"input_interpolation": "zero-order hold over each step"})
    est = NonlinearPHIdentifier(2, delayed_feedthrough=True).fit_dataset(
        ds, inputs=["u"], outputs=outs)
    # measured 7.6 % held out on one machine, 26.9 % on another with AVX-512 (numpy's kernels
    # differ there in the last bits, and the fit's path through the levels with them), 88 %
    # without the short segments: 50 % leaves the path room on any machine and still fails
    # without them
    assert "on segments of 10 steps" in est.result_.stopping_reason
    assert est.result_.validation_error < 0.5
