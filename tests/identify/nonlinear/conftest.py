"""Harvested data of the nonlinear vendor benchmark FMUs for the nonlinear identification tests."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs

#: input, output, amplitude of the input, band of the multisine (Hz): the spring's elongation
#: stays within ±0.7 x_ref (force up to +50 % above the linear law), the coil's flux up to
#: 0.8 psi_sat (inductance down to 1/3), the damper's velocity within ±1 m/s
VENDOR = {
    "power_damper": ("v", "F", 1.0, (0.2, 5.0)),
    "power_damper_stepped": ("v", "F", 1.0, (0.2, 5.0)),
    "progressive_spring": ("v", "F", 0.15, (0.5, 2.0)),
    "saturating_inductor": ("V", "i", 5.0, (0.5, 3.0)),
}
#: record length (s) and step (s) of a run
T, DT = 10.0, 0.01


def multisine(seed: int, amplitude: float, band: tuple[float, float]) -> tuple:
    """``(t, u)``: a random-phase multisine with every harmonic of 1/T in ``band``, peak
    ``amplitude``."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T + DT / 2, DT)
    f = np.arange(max(1, round(band[0] * T)), round(band[1] * T) + 1) / T
    u = np.cos(2 * np.pi * f[:, None] * t[None] + rng.uniform(0, 2 * np.pi, f.size)[:, None])
    u = u.sum(axis=0)
    return t, amplitude * u / np.abs(u).max()


def stopped_mass_run(seed: int, amplitude: float, stops) -> tuple:
    """One run of a mass (1 kg) on a spring (40 N/m) and a damper (2 N·s/m) whose stops push
    with ``stops(q, v)`` (N), from rest under a multisine force (8 lines in 0.2–3 Hz, 10 s at
    0.01 s), the force taken as linear between its samples (the fit's input hold): ``(t, F,
    v)``, simulated with scipy (DOP853, rtol 1e-11)."""
    from scipy.integrate import solve_ivp

    rng = np.random.default_rng(seed)
    f, ph, a = rng.uniform(0.2, 3.0, 8), rng.uniform(0, 2 * np.pi, 8), rng.uniform(0.5, 1, 8)
    t = np.arange(0.0, T + DT / 2, DT)
    F = amplitude * (np.sin(2 * np.pi * np.multiply.outer(t, f) + ph) @ a) / a.sum()

    def rhs(s: float, x: np.ndarray) -> list[float]:
        q, v = x
        return [v, np.interp(s, t, F) - 2.0 * v - 40.0 * q - stops(q, v)]

    sol = solve_ivp(rhs, (0.0, T), [0.0, 0.0], t_eval=t, method="DOP853", rtol=1e-11,
                    atol=1e-13, max_step=DT / 4)
    return t, F[:, None], sol.y[1][:, None]


@pytest.fixture(scope="session")
def vendor_data(benchmark_fmus):
    """``vendor_data(name) -> xarray.Dataset``: three runs (seeds 1, 2, 3) of a nonlinear vendor
    FMU under :func:`multisine` inputs, harvested once per session."""
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            inp, _, amp, band = VENDOR[name]
            sigs = [{inp: fs.signals.ArraySignal(*multisine(s, amp, band), interpolation="zoh")}
                    for s in (1, 2, 3)]
            cache[name] = fs.harvest(benchmark_fmus[name], None, signals=sigs, stop_time=T,
                                     step=DT, progress=False, workers=1)
        return cache[name]

    return get


_IDENTIFIED: dict = {}


def identified_power_damper(fmu) -> fs.PortedSystem:
    """The power damper's drop-in surrogate from the nonlinear fit's defaults on two
    :func:`multisine` runs (seeds 1, 2) of the FMU ``fmu``, identified once per session (the
    braked-mass tests of couple and export use the same)."""
    key = str(fmu)
    if key not in _IDENTIFIED:
        from fmu_surrogate.identify import NonlinearPHIdentifier

        inp, out, amp, band = VENDOR["power_damper"]
        sigs = [{inp: fs.signals.ArraySignal(*multisine(s, amp, band), interpolation="zoh")}
                for s in (1, 2)]
        ds = fs.harvest(fmu, None, signals=sigs, stop_time=T, step=DT, progress=False,
                        workers=1)
        _IDENTIFIED[key] = NonlinearPHIdentifier().fit_dataset(
            ds, inputs=[inp], outputs=[out]).to_surrogate()
    return _IDENTIFIED[key]
