"""A measured output that reads the effort, ``K_m z(x)``: the spring force of a mass on a
progressive spring, next to its velocity (the power output), simulated with scipy.  The fitted
core has a sensor port for it (its input held at zero, no power exchanged)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import fmu_surrogate as fs
from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier

C, K1, K3 = 0.5, 1.0, 2.0


def _run(seed: int, T: float = 20.0, dt: float = 0.02) -> tuple[np.ndarray, ...]:
    """A random multisine force on the unit mass from rest: force, velocity, spring force."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T + dt / 2, dt)
    f, ph, a = rng.uniform(0.05, 0.6, 6), rng.uniform(0, 2 * np.pi, 6), rng.uniform(0.5, 1, 6)

    def F(s):
        return 4.0 * (np.sin(2 * np.pi * np.multiply.outer(s, f) + ph) @ a) / a.sum()

    def rhs(s, x):
        q, v = x
        return [v, F(s) - C * v - K1 * q - K3 * q ** 3]

    sol = solve_ivp(rhs, (0, T), [0.0, 0.0], t_eval=t, rtol=1e-10, atol=1e-12, method="DOP853")
    q, v = sol.y
    return t, F(t), v, K1 * q + K3 * q ** 3


@pytest.fixture(scope="module")
def fitted():
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    runs = [_run(s) for s in (1, 2, 3)]  # the last one held out
    recs = [RunRecord(index=i, values={"F": u, "v": v, "Fs": fsp})
            for i, (_, u, v, fsp) in enumerate(runs)]
    ds = records_to_dataset(recs, runs[0][0], None, ["F", "v", "Fs"])
    est = NonlinearPHIdentifier(2, ridges=("quartic",), max_iter=100,
                                linear=fs.identify.LinearPHIdentifier(
                                    2, ports=[{"u": "F", "y": "v"}]))
    return est.fit_dataset(ds, inputs=["F"], outputs=["v", "Fs"])


def test_the_spring_force_is_read_from_the_effort(fitted):
    sur = fitted.to_surrogate()
    # one power port (F, v) and one sensor port behind it: input held at zero, the spring
    # force its output
    assert sur.system.n_inputs == 2
    assert np.array_equal(sur.ports.Tu[1], [0.0]) and sur.ports.cu[1] == 0.0
    assert sur.ports.Ty[1, 1] == 1.0 and sur.ports.Ty[0, 1] == 0.0
    assert sur.system.input_names[1] == "Fs_sensor"  # an exported FMU's parameter, at 0
    # both outputs on a run neither fit has seen (the fit's input hold and internal step):
    # measured 0.056 % (v), 0.063 % (Fs) relative RMS; the held-out run 0.089 % against the
    # linear model's 50 % (its measured output reads the state only); 2 % leaves room for the
    # optimiser's path on other machines
    t, u, v, fsp = _run(7)
    y = fitted.predict(t, u[:, None])
    err = [np.linalg.norm(y[:, i] - r) / np.linalg.norm(r) for i, r in enumerate((v, fsp))]
    assert max(err) <= 0.02
    assert fitted.result_.validation_error <= 0.02
    assert fitted.result_.linear_validation_error >= 0.25


def test_the_sensor_port_exchanges_no_power(fitted):
    sur = fitted.to_surrogate()
    t, u, _, _ = _run(5, T=10.0)
    tr = fs.simulate(sur, t, u[:, None])
    # its input is zero at every step: nothing supplied through it, the balance is the
    # force port's (round-off, measured 1e-15 of the energy scale)
    assert np.all(tr.core.u[:, 1] == 0.0)
    assert abs(tr.energy_residual) <= 1e-10 * tr.core.energy_scale
