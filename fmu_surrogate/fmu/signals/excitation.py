"""Broadband excitation signals for system identification: the periodic Schroeder multisine,
the pseudo-random binary sequence (m-sequence) and band-limited Gaussian noise."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from fmu_surrogate.fmu.errors import SignalError
from fmu_surrogate.fmu.signals.base import Signal, _finite, _nonneg, _positive

__all__ = ["PRBS", "BandLimitedNoise", "SchroederMultisine"]


@dataclass(frozen=True)
class SchroederMultisine(Signal):
    """Periodic multisine with Schroeder phases (low crest factor).

    ``u(t) = offset + Σ_k a cos(2π f_k t + φ_k)``, ``φ_k = -π k (k-1) / K`` for the lines
    ``k = 1..K`` in the given order, equal amplitudes ``a = rms·√(2/K)`` so that the RMS of the
    varying part is ``rms``.  Give the line frequencies explicitly or use
    :meth:`from_band` (``n`` equally spaced lines from ``f_min`` to ``f_max``).

    Parameters
    ----------
    frequencies : sequence of float
        Line frequencies in Hz (> 0, strictly increasing).
    rms : float
        RMS of the signal without offset.
    offset : float
        Value added to the sum of the lines.
    period : float or None
        Period of the signal; must be a common period of all lines (each ``f_k · period`` an
        integer).  ``None``: the smallest such period, found from the frequencies (they must then
        be commensurate: integer multiples of a base frequency ``max(f) / q``, ``q <= 1e5``).
    """

    frequencies: tuple[float, ...] = (1.0,)
    rms: float = 1.0
    offset: float = 0.0
    period: float | None = None
    kind: ClassVar[str] = "schroeder_multisine"

    def __post_init__(self) -> None:
        freqs = tuple(float(f) for f in np.atleast_1d(np.asarray(self.frequencies, dtype=float)))
        if not freqs:
            raise SignalError("SchroederMultisine: frequencies is empty; give at least one line.")
        for i, f in enumerate(freqs):
            _finite("SchroederMultisine", **{f"frequencies[{i}]": f})
            _positive("SchroederMultisine", **{f"frequencies[{i}]": f})
        if any(b <= a for a, b in itertools.pairwise(freqs)):
            raise SignalError("SchroederMultisine: frequencies must be strictly increasing; "
                              "sort them and remove duplicates.")
        _finite("SchroederMultisine", rms=self.rms, offset=self.offset)
        _nonneg("SchroederMultisine", rms=self.rms)
        period = self.period
        if period is None:
            period = _common_period(freqs)
        else:
            _finite("SchroederMultisine", period=period)
            _positive("SchroederMultisine", period=period)
            period = float(period)
            k = np.asarray(freqs) * period
            if np.max(np.abs(k - np.round(k))) > 1e-6 * max(1.0, float(np.max(k))):
                raise SignalError(
                    f"SchroederMultisine: period {period:g} is not a common period of the "
                    f"frequencies (f·period must be integers); omit period to compute it, or use "
                    f"frequencies that are multiples of 1/period."
                )
        object.__setattr__(self, "frequencies", freqs)
        object.__setattr__(self, "rms", float(self.rms))
        object.__setattr__(self, "offset", float(self.offset))
        object.__setattr__(self, "period", period)

    @classmethod
    def from_band(cls, f_min: float, f_max: float, n: int, rms: float = 1.0,
                  offset: float = 0.0) -> SchroederMultisine:
        """``n`` equally spaced lines from ``f_min`` to ``f_max`` (Hz).

        The period is ``1/Δf`` with ``Δf = (f_max - f_min)/(n - 1)`` when ``f_min`` is a multiple
        of ``Δf`` (e.g. ``f_min = Δf``); otherwise the smallest common period.
        """
        _finite("SchroederMultisine", f_min=f_min, f_max=f_max)
        n = int(n)
        if n < 1:
            raise SignalError(f"SchroederMultisine: n = {n} lines; use n >= 1.")
        if n == 1:
            return cls(frequencies=(float(f_min),), rms=rms, offset=offset)
        if not 0 < f_min < f_max:
            raise SignalError(f"SchroederMultisine: need 0 < f_min < f_max, got f_min={f_min}, "
                              f"f_max={f_max}; swap or correct them.")
        return cls(frequencies=tuple(np.linspace(f_min, f_max, n)), rms=rms, offset=offset)

    @property
    def phases(self) -> np.ndarray:
        """Schroeder phases ``φ_k = -π k (k-1) / K`` (radians), shape ``(K,)``."""
        K = len(self.frequencies)
        k = np.arange(1, K + 1)
        return -np.pi * k * (k - 1) / K

    @property
    def line_amplitude(self) -> float:
        """Amplitude of every line, ``rms·√(2/K)``."""
        return self.rms * math.sqrt(2.0 / len(self.frequencies))

    def _eval(self, t):
        f = np.asarray(self.frequencies)
        ph = self.phases
        flat = t.reshape(-1)
        out = np.empty(flat.shape)
        # chunked so that memory stays O(chunk * K)
        chunk = max(1, 2_000_000 // len(f))
        for i in range(0, flat.size, chunk):
            tt = flat[i:i + chunk, None]
            out[i:i + chunk] = np.cos(2 * np.pi * f * tt + ph).sum(axis=1)
        return self.offset + self.line_amplitude * out


def _common_period(freqs: Sequence[float]) -> float:
    """Smallest P with f·P integer for all f.

    Ratios ``f / max(f)`` must be fractions with denominators up to 1e5 to 1e-11 relative.
    """
    from fractions import Fraction

    fmax = max(freqs)
    # express every frequency as a fraction of fmax, find the lcm of denominators
    ratios = [Fraction(f / fmax).limit_denominator(100_000) for f in freqs]
    for f, r in zip(freqs, ratios):
        if abs(float(r) * fmax - f) > 1e-11 * fmax:
            raise SignalError(
                "SchroederMultisine: the frequencies are not multiples of a common base frequency, "
                "so the signal has no period; use harmonics of 1/period (e.g. from_band with "
                "f_min equal to the line spacing) or pass period explicitly."
            )
    import math as _m

    den = 1
    for r in ratios:
        den = den * r.denominator // _m.gcd(den, r.denominator)
    nums = [r.numerator * (den // r.denominator) for r in ratios]
    g = 0
    for x in nums:
        g = _m.gcd(g, x)
    f0 = fmax * g / den  # base frequency
    return 1.0 / f0


# ---------------------------------------------------------------------- PRBS
# Feedback taps (1-based bit positions) of maximal-length Fibonacci LFSRs, x^n + x^m + 1 style.
# Source: the standard table (Xilinx XAPP052 / Wikipedia "Linear-feedback shift register").
_LFSR_TAPS: dict[int, tuple[int, ...]] = {
    2: (2, 1), 3: (3, 2), 4: (4, 3), 5: (5, 3), 6: (6, 5), 7: (7, 6), 8: (8, 6, 5, 4),
    9: (9, 5), 10: (10, 7), 11: (11, 9), 12: (12, 11, 10, 4), 13: (13, 12, 11, 8),
    14: (14, 13, 12, 2), 15: (15, 14), 16: (16, 15, 13, 4), 17: (17, 14), 18: (18, 11),
    19: (19, 18, 17, 14), 20: (20, 17),
}


def _mls(order: int, seed: int) -> np.ndarray:
    """One period (2^order - 1 bits, uint8) of a maximal-length sequence, seeded start state."""
    taps = _LFSR_TAPS[order]
    period = (1 << order) - 1
    state = seed % period + 1  # non-zero initial register
    bits = np.empty(period, dtype=np.uint8)
    for i in range(period):
        bits[i] = state & 1
        fb = 0
        for tp in taps:
            fb ^= (state >> (order - tp)) & 1
        state = (state >> 1) | (fb << (order - 1))
    return bits


@dataclass(frozen=True)
class PRBS(Signal):
    """Pseudo-random binary sequence from a maximal-length LFSR (m-sequence).

    ``u(t) = offset + amplitude · levels[b_k]`` with ``k = floor((t - t0) / bit_period)`` and ``b`` one period of the
    m-sequence of the given ``order`` (``2**order - 1`` bits, then it repeats).  The ``seed`` sets
    the LFSR's initial register (``seed mod (2**order-1) + 1``), so different seeds give cyclic
    shifts of the same m-sequence — the flat spectrum and two-valued autocorrelation of an
    m-sequence are kept for every seed.  Same seed → identical signal.  For ``t < t0`` the value
    is that of bit 0.  Defined for all ``t`` (periodic).  ``PRBS(amplitude=a, offset=c)`` switches
    between ``c − a`` and ``c + a``; descriptions without ``amplitude`` and ``offset`` (older
    datasets) mean ``amplitude=1, offset=0``, the same signal as before.

    Parameters
    ----------
    bit_period : float
        Duration of one bit (s), > 0.
    levels : (float, float)
        Values for bit 0 and bit 1 (before ``amplitude`` and ``offset``).
    seed : int
        Sets the LFSR's initial register: a cyclic shift of the sequence.
    order : int
        Register length, 2..20; period ``(2**order - 1) * bit_period``.
    t0 : float
        Start of the first bit (s).
    amplitude : float
        Factor on the levels.
    offset : float
        Value added to the scaled levels.
    """

    bit_period: float = 1.0
    levels: tuple[float, float] = (-1.0, 1.0)
    seed: int = 0
    order: int = 10
    t0: float = 0.0
    amplitude: float = 1.0
    offset: float = 0.0
    kind: ClassVar[str] = "prbs"
    _bits: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _finite("PRBS", bit_period=self.bit_period, t0=self.t0, amplitude=self.amplitude,
                offset=self.offset)
        _positive("PRBS", bit_period=self.bit_period)
        try:
            lv = tuple(float(x) for x in self.levels)
        except (TypeError, ValueError):
            raise SignalError(f"PRBS: levels must be two numbers (low, high), got "
                              f"{self.levels!r}.") from None
        if len(lv) != 2:
            raise SignalError(f"PRBS: levels must be two numbers (low, high), got {self.levels!r}.")
        _finite("PRBS", low=lv[0], high=lv[1])
        if int(self.order) not in _LFSR_TAPS:
            raise SignalError(f"PRBS: order {self.order} unsupported; use 2..20 (period "
                              f"2**order - 1 bits).")
        if int(self.seed) != self.seed or self.seed < 0:
            raise SignalError(f"PRBS: seed must be a non-negative integer, got {self.seed!r}.")
        object.__setattr__(self, "levels", lv)
        object.__setattr__(self, "order", int(self.order))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "bit_period", float(self.bit_period))
        object.__setattr__(self, "t0", float(self.t0))
        object.__setattr__(self, "amplitude", float(self.amplitude))
        object.__setattr__(self, "offset", float(self.offset))
        object.__setattr__(self, "_bits", _mls(self.order, self.seed))

    @property
    def period(self) -> float:
        """Period of the signal (s): ``(2**order - 1) * bit_period``."""
        return len(self._bits) * self.bit_period

    @property
    def bits(self) -> np.ndarray:
        """One period of the bit sequence (0/1), shape ``(2**order - 1,)``."""
        return self._bits.copy()

    def _eval(self, t):
        k = np.floor((t - self.t0) / self.bit_period)
        idx = np.mod(k, len(self._bits)).astype(np.int64)
        lo, hi = (self.offset + self.amplitude * v for v in self.levels)
        vals = np.where(self._bits[idx] == 1, hi, lo)
        return np.where(t < self.t0, lo, vals)


# ---------------------------------------------------------------------- noise
@dataclass(frozen=True)
class BandLimitedNoise(Signal):
    """Seeded Gaussian white noise, ideally band-pass filtered to ``[f_low, f_high]`` Hz.

    Construction (deterministic for a seed): on a fine grid ``t_i = t0 + i·dt``,
    ``i = 0..N-1``, ``N = ceil(duration/dt) + 1``, draw independent standard normal real and
    imaginary parts for every FFT bin (``numpy.random.default_rng(seed)``), zero the bins outside
    ``[f_low, f_high]`` (an ideal filter: no power at all above ``f_high`` on the grid), inverse
    FFT, scale to standard deviation ``std`` and add ``offset``.  Values between grid points are
    interpolated linearly; ``dt`` defaults to ``1 / (20 f_high)`` so that the interpolation is
    accurate to about 1 %.  The result is Gaussian white noise in the band (a random-phase,
    random-amplitude multisine with period ``N·dt``).

    Defined on ``[t0, t0 + duration]`` (``t_end``); outside that it holds the end values.

    Parameters
    ----------
    f_high : float
        Upper band edge (Hz), > 0.
    duration : float
        Length of the signal (s); normally the experiment's stop time minus start time.
    std : float
        Standard deviation of the generated samples (exact on the grid).
    seed : int
        Seed of the random spectrum (same seed, same signal).
    f_low : float
        Lower band edge (Hz), 0 = low-pass (the DC bin is excluded so that the mean is ``offset``).
    offset : float
        Mean of the signal.
    dt : float or None
        Grid spacing; ``None``: ``1 / (20 f_high)``.
    t0 : float
        Start of the signal (s).
    """

    f_high: float = 1.0
    duration: float = 10.0
    std: float = 1.0
    seed: int = 0
    f_low: float = 0.0
    offset: float = 0.0
    dt: float | None = None
    t0: float = 0.0
    kind: ClassVar[str] = "band_limited_noise"
    _grid: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = "BandLimitedNoise"
        _finite(n, f_high=self.f_high, duration=self.duration, std=self.std,
                f_low=self.f_low, offset=self.offset, t0=self.t0)
        _nonneg(n, f_low=self.f_low, std=self.std)
        _positive(n, f_high=self.f_high, duration=self.duration)
        if not self.f_low < self.f_high:
            raise SignalError(f"{n}: f_low = {self.f_low} must be below f_high = {self.f_high}; "
                              f"swap them.")
        if int(self.seed) != self.seed or self.seed < 0:
            raise SignalError(f"{n}: seed must be a non-negative integer, got {self.seed!r}.")
        dt = self.dt
        if dt is None:
            dt = 1.0 / (20.0 * self.f_high)
        _finite(n, dt=dt)
        _positive(n, dt=dt)
        if dt > 1.0 / (2.0 * self.f_high):
            raise SignalError(f"{n}: dt = {dt} is too coarse for f_high = {self.f_high} (Nyquist "
                              f"needs dt < 1/(2 f_high) = {1 / (2 * self.f_high):g}); use a smaller "
                              f"dt or omit it.")
        npts = math.ceil(self.duration / dt - 1e-9) + 1
        if npts > 50_000_000:
            raise SignalError(f"{n}: {npts} grid points (duration/dt) is too many; use a larger dt "
                              f"or a shorter duration.")
        for k in ("f_high", "duration", "std", "f_low", "offset", "t0"):
            object.__setattr__(self, k, float(getattr(self, k)))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "dt", float(dt))
        object.__setattr__(self, "_grid", self._generate(npts))

    def _generate(self, npts: int) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        nf = npts // 2 + 1
        spec = rng.standard_normal(nf) + 1j * rng.standard_normal(nf)
        f = np.fft.rfftfreq(npts, d=self.dt)
        keep = (f >= self.f_low) & (f <= self.f_high) & (f > 0)
        if npts % 2 == 0:
            keep[-1] = False  # the Nyquist bin would be real-only; f_high < Nyquist anyway
        spec = np.where(keep, spec, 0.0)
        x = np.fft.irfft(spec, n=npts)
        s = x.std()
        if s == 0.0:
            raise SignalError(
                f"BandLimitedNoise: the band [{self.f_low}, {self.f_high}] Hz contains no "
                f"frequency line of a {self.duration:g} s signal (line spacing "
                f"{1 / (npts * self.dt):g} Hz); widen the band or lengthen the duration."
            )
        return self.offset + self.std * (x - x.mean()) / s

    @property
    def grid_times(self) -> np.ndarray:
        """Times of the generation grid, shape ``(N,)``."""
        return self.t0 + self.dt * np.arange(len(self._grid))

    @property
    def grid_values(self) -> np.ndarray:
        """Values on the generation grid, shape ``(N,)``."""
        return self._grid.copy()

    @property
    def t_end(self) -> float:
        return self.t0 + self.duration

    @property
    def t_start(self) -> float:
        return self.t0

    def _eval(self, t):
        return np.interp(t, self.grid_times, self._grid)
