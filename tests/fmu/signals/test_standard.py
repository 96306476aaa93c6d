"""Input signals: values against analytic references, spectra, seeding, validation, round trips."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fmu_surrogate.fmu.errors import ExperimentError, SignalError
from fmu_surrogate.fmu.signals.standard import (
    PRBS,
    SIGNAL_KINDS,
    ArraySignal,
    BandLimitedNoise,
    Chirp,
    Constant,
    SchroederMultisine,
    Step,
    check_signal_fits,
    sample_inputs,
    signal_from_description,
)

ALL_SIGNALS = [
    Constant(2.5),
    Step(t0=1.0, before=-1.0, after=3.0),
    Chirp(f0=0.5, f1=4.0, t1=5.0, amplitude=2.0, offset=0.3),
    Chirp(f0=0.5, f1=4.0, t1=5.0, method="logarithmic", phi=-90),
    SchroederMultisine.from_band(0.2, 2.0, 10, rms=0.7, offset=1.0),
    PRBS(bit_period=0.25, levels=(0.0, 2.0), seed=7, order=7),
    BandLimitedNoise(f_high=3.0, duration=10.0, std=0.5, seed=3, f_low=0.5),
    ArraySignal([0.0, 2.0, 5.0, 10.0], [0.0, 1.0, -1.0, 4.0], "zoh"),
]


# ------------------------------------------------------------------ shared behaviour
@pytest.mark.parametrize("sig", ALL_SIGNALS, ids=lambda s: s.kind)
def test_round_trip_through_json_is_exact(sig):
    d = json.loads(json.dumps(sig.describe()))
    assert d["kind"] == sig.kind
    again = signal_from_description(d)
    assert again == sig
    t = np.linspace(-1.0, 12.0, 1301)
    np.testing.assert_array_equal(again(t), sig(t))  # same construction -> bit-identical
    assert signal_from_description(sig.to_json()) == sig


@pytest.mark.parametrize("sig", ALL_SIGNALS, ids=lambda s: s.kind)
def test_vectorised_shape_and_dtype(sig):
    t = np.linspace(0, 3, 12).reshape(3, 4)
    v = sig(t)
    assert v.shape == (3, 4) and v.dtype == np.float64
    np.testing.assert_array_equal(v.reshape(-1), sig(t.reshape(-1)))
    assert sig(0.5).shape == ()


def test_every_kind_is_registered():
    assert set(SIGNAL_KINDS) == {s.kind for s in ALL_SIGNALS}


def test_unknown_kind_and_parameters_are_refused():
    with pytest.raises(SignalError, match="unknown signal kind 'sawtooth'.*known kinds"):
        signal_from_description({"kind": "sawtooth"})
    with pytest.raises(SignalError, match=r"unknown parameter\(s\) \['freq'\]"):
        signal_from_description({"kind": "step", "freq": 1})
    with pytest.raises(SignalError, match="'kind' key"):
        signal_from_description({"t0": 1})


# ------------------------------------------------------------------ step / constant
def test_step_is_right_continuous():
    s = Step(t0=1.0, before=-1.0, after=3.0)
    np.testing.assert_array_equal(s([0.0, 0.999, 1.0, 2.0]), [-1.0, -1.0, 3.0, 3.0])
    assert s.t_end is None


# ------------------------------------------------------------------ chirp
def test_linear_chirp_matches_the_analytic_phase():
    c = Chirp(f0=1.0, f1=6.0, t1=4.0, amplitude=2.0, offset=0.5)
    t = np.linspace(0, 4, 4001)
    phase = 2 * np.pi * (1.0 * t + (6.0 - 1.0) * t**2 / (2 * 4.0))
    # same formula evaluated two ways; only rounding differs
    np.testing.assert_allclose(c(t), 0.5 + 2.0 * np.cos(phase), atol=1e-12)


@pytest.mark.parametrize("method", ["linear", "logarithmic"])
def test_chirp_instantaneous_frequency_from_zero_crossings(method):
    """Half-periods between zero crossings give the local frequency f = 1 / (2 Δt)."""
    c = Chirp(f0=2.0, f1=10.0, t1=3.0, method=method)
    t = np.linspace(0, 3, 600_001)
    u = c(t)
    i = np.flatnonzero(np.sign(u[:-1]) != np.sign(u[1:]))
    tz = t[i] - u[i] * (t[i + 1] - t[i]) / (u[i + 1] - u[i])  # linear interpolation of crossings
    f_meas = 1.0 / (2.0 * np.diff(tz))
    t_mid = 0.5 * (tz[1:] + tz[:-1])
    f_true = c.instantaneous_frequency(t_mid)
    # midpoint rule on a half-period: error ~ f''·Δt²/24 relative, below 1e-3 for these sweeps
    np.testing.assert_allclose(f_meas, f_true, rtol=1e-3)
    assert t_mid[0] < 0.3 and t_mid[-1] > 2.8  # the comparison covers the whole sweep


def test_chirp_validation():
    with pytest.raises(SignalError, match="f0 = -1.*negative"):
        Chirp(f0=-1.0)
    with pytest.raises(SignalError, match="t1 .* must be > 0"):
        Chirp(t1=0.0)
    with pytest.raises(SignalError, match="amplitude = nan is not finite"):
        Chirp(amplitude=float("nan"))
    with pytest.raises(SignalError, match="method 'cubic' is unknown"):
        Chirp(method="cubic")
    with pytest.raises(SignalError, match="needs f0 > 0"):
        Chirp(f0=0.0, method="logarithmic")


# ------------------------------------------------------------------ Schroeder multisine
def test_schroeder_spectrum_lies_exactly_on_the_requested_lines():
    K, N = 31, 1024
    s = SchroederMultisine(frequencies=tuple(float(k) for k in range(1, K + 1)), rms=1.5)
    assert s.period == pytest.approx(1.0)
    t = np.arange(N) / N * s.period  # exactly one period: no leakage
    X = np.fft.rfft(s(t)) / (N / 2)
    amp = np.abs(X)
    np.testing.assert_allclose(amp[1:K + 1], s.line_amplitude, rtol=1e-10)
    assert s.line_amplitude == pytest.approx(1.5 * np.sqrt(2 / K))
    others = np.delete(amp, np.arange(1, K + 1))
    assert others.max() < 1e-12 * s.line_amplitude  # round-off only
    # phases are Schroeder's -pi k(k-1)/K (cosine convention)
    np.testing.assert_allclose(np.angle(X[1:K + 1]),
                               np.angle(np.exp(1j * s.phases)), atol=1e-9)
    # RMS over one period equals the requested rms (Parseval)
    assert np.sqrt(np.mean(s(t) ** 2)) == pytest.approx(1.5, rel=1e-12)


def test_schroeder_crest_factor_is_low():
    K = 100
    s = SchroederMultisine(frequencies=tuple(float(k) for k in range(1, K + 1)))
    t = np.arange(16384) / 16384
    u = s(t)
    cf = np.abs(u).max() / np.sqrt(np.mean(u**2))
    # Schroeder (1970) phases give ~1.7 for a flat spectrum (Pintelon & Schoukens, System
    # Identification, ch. 5); a single sine has sqrt(2) = 1.414, zero phases sqrt(2K) = 14.1.
    assert 1.5 < cf < 1.8
    rng = np.random.default_rng(0)
    k = np.arange(1, K + 1)
    rand = [np.cos(2 * np.pi * k * t[:, None] + rng.uniform(0, 2 * np.pi, K)).sum(1)
            for _ in range(5)]
    assert all(np.abs(v).max() / np.sqrt(np.mean(v**2)) > cf for v in rand)


def test_schroeder_from_band_and_period():
    s = SchroederMultisine.from_band(0.5, 5.0, 10)
    np.testing.assert_allclose(s.frequencies, np.arange(1, 11) * 0.5)
    assert s.period == pytest.approx(2.0)
    t = np.linspace(0, 2, 101)
    np.testing.assert_allclose(s(t), s(t + s.period), atol=1e-9)
    assert s.t_end is None
    odd = SchroederMultisine(frequencies=(0.3, 0.5))  # base 0.1 Hz -> period 10 s
    assert odd.period == pytest.approx(10.0)
    with pytest.raises(SignalError, match="not a common period"):
        SchroederMultisine(frequencies=(1.0, 2.0), period=0.7)
    with pytest.raises(SignalError, match="strictly increasing"):
        SchroederMultisine(frequencies=(2.0, 1.0))
    with pytest.raises(SignalError, match="must be > 0"):
        SchroederMultisine(frequencies=(-1.0, 1.0))
    with pytest.raises(SignalError, match="not multiples of a common base"):
        SchroederMultisine(frequencies=(1.0, np.sqrt(2.0)))


# ------------------------------------------------------------------ PRBS
def test_prbs_is_a_maximal_length_sequence():
    p = PRBS(bit_period=0.1, levels=(-1.0, 1.0), seed=5, order=9)
    bits = p.bits
    n = 2**9 - 1
    assert bits.shape == (n,) and p.period == pytest.approx(n * 0.1)
    assert bits.sum() == 2**8  # an m-sequence has 2^(order-1) ones per period
    b = 2.0 * bits - 1.0
    acf = np.array([np.dot(b, np.roll(b, k)) for k in range(n)])
    assert acf[0] == n and np.all(acf[1:] == -1)  # two-valued circular autocorrelation


def test_prbs_levels_bit_period_and_seeding():
    p = PRBS(bit_period=0.25, levels=(0.0, 2.0), seed=3, order=6)
    t = np.arange(0, 20, 0.05) + 0.01  # 5 samples per bit, none on a bit edge
    u = p(t)
    assert set(np.unique(u)) == {0.0, 2.0}
    per_bit = u.reshape(-1, 5)
    assert np.all(per_bit == per_bit[:, :1])  # constant within each bit
    np.testing.assert_array_equal(per_bit[:, 0], np.where(p.bits[np.arange(80) % 63], 2.0, 0.0))
    np.testing.assert_array_equal(PRBS(0.25, (0.0, 2.0), 3, 6)(t), u)  # same seed, same signal
    other = PRBS(0.25, (0.0, 2.0), 4, 6)
    assert not np.array_equal(other(t), u)
    # different seeds are cyclic shifts of one m-sequence
    shifts = [k for k in range(63) if np.array_equal(np.roll(p.bits, k), other.bits)]
    assert len(shifts) == 1
    assert p(-1.0) == 0.0  # before t0: the low level
    with pytest.raises(SignalError, match="bit_period .* must be > 0"):
        PRBS(bit_period=0.0)
    with pytest.raises(SignalError, match="order 30 unsupported"):
        PRBS(order=30)


# ------------------------------------------------------------------ band-limited noise
def test_band_limited_noise_has_no_power_outside_the_band():
    s = BandLimitedNoise(f_high=2.0, duration=50.0, std=0.8, seed=11, f_low=0.5, offset=1.0)
    x = s.grid_values
    N = x.size
    f = np.fft.rfftfreq(N, d=s.dt)
    P = np.abs(np.fft.rfft(x - x.mean())) ** 2
    inside = (f >= 0.5) & (f <= 2.0)
    # an ideal FFT filter: outside power is round-off (~1e-30 relative), not filter leakage
    assert P[~inside].max() < 1e-20 * P[inside].max()
    assert np.std(x) == pytest.approx(0.8, rel=1e-12)
    assert np.mean(x) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(s(s.grid_times), x, rtol=0, atol=1e-12)
    assert s.t_end == pytest.approx(50.0) and s.t_start == 0.0


def test_band_limited_noise_is_gaussian_and_seeded():
    s = BandLimitedNoise(f_high=5.0, duration=200.0, seed=1)
    z = s.grid_values
    # Gaussian: 4th moment/variance^2 = 3; ~2000 independent lines -> standard error ~0.1
    kurt = np.mean(z**4) / np.mean(z**2) ** 2
    assert 2.6 < kurt < 3.4
    np.testing.assert_array_equal(BandLimitedNoise(f_high=5.0, duration=200.0, seed=1).grid_values, z)
    assert not np.allclose(BandLimitedNoise(f_high=5.0, duration=200.0, seed=2).grid_values, z)


def test_band_limited_noise_validation():
    with pytest.raises(SignalError, match="f_low = 3.0 must be below f_high"):
        BandLimitedNoise(f_high=2.0, f_low=3.0)
    with pytest.raises(SignalError, match="too coarse"):
        BandLimitedNoise(f_high=10.0, dt=0.1)
    with pytest.raises(SignalError, match="contains no frequency line"):
        BandLimitedNoise(f_high=0.051, f_low=0.05, duration=1.0)
    with pytest.raises(SignalError, match="f_high = inf is not finite"):
        BandLimitedNoise(f_high=float("inf"))


# ------------------------------------------------------------------ arrays
def test_array_signal_interpolation():
    lin = ArraySignal([0.0, 1.0, 3.0], [0.0, 2.0, -2.0])
    np.testing.assert_allclose(lin([0.0, 0.5, 1.0, 2.0, 3.0]), [0.0, 1.0, 2.0, 0.0, -2.0])
    zoh = ArraySignal([0.0, 1.0, 3.0], [0.0, 2.0, -2.0], interpolation="zoh")
    np.testing.assert_array_equal(zoh([0.0, 0.99, 1.0, 2.9, 3.0]), [0.0, 0.0, 2.0, 2.0, -2.0])
    assert lin.t_end == 3.0 and lin.t_start == 0.0
    assert not lin.t.flags.writeable  # immutable like the other signals


def test_array_signal_validation():
    with pytest.raises(SignalError, match=r"not strictly increasing \(t\[1\] = 1.0, t\[2\] = 1.0\)"):
        ArraySignal([0.0, 1.0, 1.0], [1, 2, 3])
    with pytest.raises(SignalError, match="same length"):
        ArraySignal([0.0, 1.0], [1.0])
    with pytest.raises(SignalError, match=r"values\[1\] = nan is not finite"):
        ArraySignal([0.0, 1.0], [1.0, np.nan])
    with pytest.raises(SignalError, match="t contains NaN"):
        ArraySignal([0.0, np.inf], [1.0, 1.0])
    with pytest.raises(SignalError, match="'cubic' is unknown"):
        ArraySignal([0.0, 1.0], [1.0, 1.0], interpolation="cubic")
    with pytest.raises(SignalError, match="empty"):
        ArraySignal([], [])


# ------------------------------------------------------------------ signal vs experiment
def test_check_signal_fits():
    arr = ArraySignal([0.0, 5.0, 10.0], [0.0, 1.0, 0.0])
    check_signal_fits(arr, 0.0, 10.0)  # exact cover
    check_signal_fits(arr, 0.0, 10.0 - 1e-12)  # within the rounding tolerance
    with pytest.raises(ExperimentError, match=r"ends at t = 10.*before the experiment's stop "
                                              r"time 20.*extend the signal.*stop_time = 10"):
        check_signal_fits(arr, 0.0, 20.0, name="u")
    with pytest.raises(ExperimentError, match=r"longer than the experiment.*stop_time = 10"):
        check_signal_fits(arr, 0.0, 5.0, name="u")
    check_signal_fits(arr, 0.0, 5.0, allow_longer=True)
    with pytest.raises(ExperimentError, match="starts at t = 0, after the experiment start -1"):
        check_signal_fits(arr, -1.0, 10.0)
    for unbounded in (Chirp(), Step(), PRBS(), SchroederMultisine()):
        check_signal_fits(unbounded, 0.0, 1e6)
    with pytest.raises(ExperimentError, match="start_time < stop_time"):
        check_signal_fits(Step(), 1.0, 0.0)


def test_sample_inputs():
    t = np.linspace(0, 2, 5)
    out = sample_inputs({"u1": Step(t0=1.0), "a.b[1]": Constant(3.0)}, t)
    np.testing.assert_array_equal(out["u1"], [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(out["a.b[1]"], [3.0] * 5)
    with pytest.raises(SignalError, match="wrap arrays in ArraySignal"):
        sample_inputs({"u": np.zeros(5)}, t)


@pytest.mark.parametrize("order", range(2, 17))
def test_prbs_taps_give_maximal_length_for_every_order(order):
    b = 2.0 * PRBS(order=order, seed=12345).bits - 1.0
    n = 2**order - 1
    acf = np.real(np.fft.ifft(np.abs(np.fft.fft(b)) ** 2))  # circular autocorrelation
    assert b.size == n
    # integers computed through an FFT: exact up to ~n·1e-16 round-off
    np.testing.assert_allclose(acf, np.r_[n, -np.ones(n - 1)], atol=1e-6)
