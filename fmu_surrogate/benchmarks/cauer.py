"""Benchmark 6a: Cauer low-pass filter with a nonlinear resistor (docs/design.md §6).

The Modelica Standard Library's ``CauerLowPassAnalog`` (nodes in, n1, n2, n3; source ``vin``
between in and ground)::

    R1 = 1 Ω   in–n1          C1 = 1.072 F  n1–0        L1 = 1.304 H ∥ C2 = 1/(1.704992² L1)  n1–n2
    C3 = 1.682 F  n2–0        L2 = 0.8586 H ∥ C4 = 1/(1.179945² L2)  n2–n3
    C5 = 0.7262 F  n3–0       R2 = 1 Ω  n3–0

plus our load branch from n3 to ground: ``R4 = 1 Ω`` in series with a nonlinear resistor whose
law is ``w1 i = w2 v² + w3 v³`` (true law ``w = (1, 0, 0.01)``, i.e. ``i = 0.01 v³``).  With
``x = (v1, v2, v3, iL1, iL2)``::

    E ẋ = (J − R) x + B vin − e3 i(v3),     E = diag(Cn, L1, L2),  B = e1 / R1
    Cn = [[C1+C2, −C2, 0], [−C2, C2+C3+C4, −C4], [0, −C4, C4+C5]]  (node capacitance, SPD)
    J  = [[0, A], [−Aᵀ, 0]],  A = [[−1, 0], [1, −1], [0, 1]],   R = diag(1/R1, 0, 1/R2, 0, 0)

a pH-ODE (index 0, ``H = ½ xᵀ E x``, effort ``z = x``) with a nonlinear resistive port at n3.
The branch current ``i`` and voltage ``v`` solve ``v3 = R4 i + v``, ``w1 i = w2 v² + w3 v³``.
Without the branch the DC gain ``v3 / vin`` is ``R2 / (R1 + R2) = 0.5``.

**Default input** (:func:`input_signal`): band-limited white noise realised as a random-phase
multisine — ``K = 64`` equally spaced lines ``f_k = k f_c / K`` up to ``f_c = 0.2 Hz`` (just above
the filter's 1 rad/s ≈ 0.16 Hz pass band), equal amplitudes (flat spectrum), RMS ``σ = 3 V``
(peaks of about ±9 V), phases uniform from ``numpy.random.default_rng(seed)``.  It is defined for
every ``t`` (so co-simulation, model exchange and the reference use the same signal) and is
periodic with period ``K / f_c = 320 s`` (longer than the default experiment of 200 s).  With the
true law and seed 0 it drives the nonlinear-resistor voltage to ``max |v| ≈ 3.6 V``, above 2 V
about 12 % of the time, where the cubic current (0.08 A at 2 V, 0.46 A at 3.6 V) is comparable to
the 1 A/V load ``R2`` — the nonlinearity is excited well beyond its linear range.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from fmu_surrogate.errors import ComputationError, FmuSurrogateError, InvalidInputError
from fmu_surrogate.ph import LinearPH

Array = np.ndarray

_L1, _L2 = 1.304, 0.8586
#: Element values of the circuit (MSL CauerLowPassAnalog plus R4 of our load branch).
ELEMENTS: dict[str, float] = {
    "R1": 1.0,
    "R2": 1.0,
    "R4": 1.0,
    "C1": 1.072,
    "C2": 1.0 / (1.704992**2 * _L1),
    "C3": 1.682,
    "C4": 1.0 / (1.179945**2 * _L2),
    "C5": 0.7262,
    "L1": _L1,
    "L2": _L2,
}
#: True law ``(w1, w2, w3)`` of the nonlinear resistor: ``i = 0.01 v³``.
TRUE_LAW: tuple[float, float, float] = (1.0, 0.0, 0.01)
#: Default experiment of the FMU (s).
DEFAULT_STOP = 200.0
DEFAULT_STEP = 0.05
#: Default input: RMS (V), cut-off (Hz), number of spectral lines.
INPUT_RMS = 3.0
INPUT_CUTOFF_HZ = 0.2
INPUT_LINES = 64

STATE_NAMES = ("v1", "v2", "v3", "iL1", "iL2")


class BranchSolveError(FmuSurrogateError, ValueError):
    """The nonlinear branch has no (Newton-reachable) solution; the message says why."""


def _elements(elements: Mapping[str, float] | None) -> dict[str, float]:
    e = dict(ELEMENTS)
    if elements:
        unknown = set(elements) - set(ELEMENTS)
        if unknown:
            raise InvalidInputError(
                f"unknown circuit elements {sorted(unknown)}; known: {sorted(ELEMENTS)}.")
        e.update({k: float(v) for k, v in elements.items()})
    return e


def matrices(elements: Mapping[str, float] | None = None) -> dict[str, Array]:
    """``E, J, R`` (5×5), ``B`` (5×1) of the linear circuit and ``b_branch`` (5,) = e3.

    The branch current enters as ``− b_branch · i``.
    """
    e = _elements(elements)
    C1, C2, C3, C4, C5 = (e[k] for k in ("C1", "C2", "C3", "C4", "C5"))
    E = np.zeros((5, 5))
    E[:3, :3] = [[C1 + C2, -C2, 0.0], [-C2, C2 + C3 + C4, -C4], [0.0, -C4, C4 + C5]]
    E[3, 3], E[4, 4] = e["L1"], e["L2"]
    A = np.array([[-1.0, 0.0], [1.0, -1.0], [0.0, 1.0]])
    J = np.zeros((5, 5))
    J[:3, 3:] = A
    J[3:, :3] = -A.T
    R = np.diag([1.0 / e["R1"], 0.0, 1.0 / e["R2"], 0.0, 0.0])
    B = np.zeros((5, 1))
    B[0, 0] = 1.0 / e["R1"]
    return {"E": E, "J": J, "R": R, "B": B, "b_branch": np.eye(5)[2]}


def linear_system(elements: Mapping[str, float] | None = None) -> LinearPH:
    """The filter without the nonlinear branch as a :class:`~fmu_surrogate.ph.LinearPH`
    (``Q = I``, descriptor ``E``; its port output is ``v1 / R1``)."""
    m = matrices(elements)
    return LinearPH(m["J"], m["R"], np.eye(5), m["B"], E=m["E"])


def dc_gain(elements: Mapping[str, float] | None = None) -> float:
    """``v3 / vin`` at DC without the nonlinear branch (0.5 for the default elements)."""
    m = matrices(elements)
    x = np.linalg.solve(m["J"] - m["R"], -m["B"][:, 0])
    return float(x[2])


def branch_solve(
    v3: float,
    w: tuple[float, float, float] = TRUE_LAW,
    R4: float = ELEMENTS["R4"],
    guess: tuple[float, float] = (0.0, 0.0),
    tol: float = 1e-12,
    max_iter: int = 50,
) -> tuple[float, float]:
    """Solve ``v3 = R4 i + v``, ``w1 i = w2 v² + w3 v³`` for ``(i, v)`` by damped Newton.

    Converged when both residuals are below ``tol`` relative to the magnitude of their terms
    (checked where the Jacobian is regular), as in the FMU.

    Raises
    ------
    BranchSolveError
        Singular Jacobian, no descent, non-finite iterates or no convergence in ``max_iter``.
    """
    w1, w2, w3 = (float(a) for a in w)
    i, v = (float(a) for a in guess)

    def res(i: float, v: float) -> tuple[float, float]:
        return w1 * i - w2 * v**2 - w3 * v**3, R4 * i + v - v3

    r = res(i, v)
    norm = np.hypot(*r)
    for it in range(max_iter + 1):
        b = -(2 * w2 * v + 3 * w3 * v**2)
        det = w1 - b * R4
        if not np.isfinite(det) or abs(det) <= 1e-12 * (abs(w1) + abs(b * R4)):
            raise BranchSolveError(f"singular Jacobian at v = {v:g}, i = {i:g} (w = {w}, v3 = {v3:g}).")
        if (abs(r[0]) <= tol * (abs(w1 * i) + abs(w2 * v**2) + abs(w3 * v**3))
                and abs(r[1]) <= tol * (abs(R4 * i) + abs(v) + abs(v3))):
            return i, v
        if it == max_iter:
            break
        di, dv = np.linalg.solve([[w1, b], [R4, 1.0]], [-r[0], -r[1]])
        lam = 1.0
        for _ in range(30):
            rn = res(i + lam * di, v + lam * dv)
            nn = np.hypot(*rn)
            if nn <= (1 - 1e-4 * lam) * norm or nn == 0.0:
                break
            lam *= 0.5
        else:
            raise BranchSolveError(f"no descent at v = {v:g}, |residual| = {norm:g} (w = {w}, v3 = {v3:g}).")
        i, v, r, norm = i + lam * di, v + lam * dv, rn, nn
        if not (np.isfinite(i) and np.isfinite(v)):
            raise BranchSolveError(f"non-finite Newton iterate (w = {w}, v3 = {v3:g}).")
    raise BranchSolveError(
        f"no convergence in {max_iter} iterations: |residual| = {norm:g} (w = {w}, v3 = {v3:g})."
    )


def input_signal(
    t: Array | float,
    rms: float = INPUT_RMS,
    cutoff_hz: float = INPUT_CUTOFF_HZ,
    n_lines: int = INPUT_LINES,
    seed: int = 0,
) -> Array:
    """Band-limited white noise ``vin(t)`` (random-phase multisine, see the module docstring).

    Parameters
    ----------
    t : array_like
        Times (any shape); the signal is defined for every real ``t``.
    rms : float
        Root-mean-square value (V).
    cutoff_hz : float
        Highest frequency (Hz); lines at ``k cutoff_hz / n_lines``, ``k = 1..n_lines``.
    n_lines : int
    seed : int
        Seed of the phases.
    """
    if n_lines < 1 or cutoff_hz <= 0:
        raise InvalidInputError("n_lines must be >= 1 and cutoff_hz > 0.")
    rng = np.random.default_rng(seed)
    phases = rng.uniform(0.0, 2.0 * np.pi, n_lines)
    f = cutoff_hz * np.arange(1, n_lines + 1) / n_lines
    t = np.asarray(t, dtype=float)
    amp = rms * np.sqrt(2.0 / n_lines)
    return amp * np.cos(2.0 * np.pi * t[..., None] * f + phases).sum(axis=-1)


@dataclass(frozen=True)
class CauerTrajectory:
    """Reference solution: ``t (N,)``, ``x (N, 5)`` = (v1, v2, v3, iL1, iL2), branch ``i, v (N,)``,
    ``v_R4 (N,)`` = R4 i and the input ``vin (N,)``."""

    t: Array
    x: Array
    i: Array
    v: Array
    v_R4: Array
    vin: Array


class Circuit:
    """Right-hand side of the circuit with a warm-started branch solve.

    Parameters
    ----------
    w : (w1, w2, w3)
    elements : mapping, optional
        Overrides of :data:`ELEMENTS`.
    """

    def __init__(self, w: tuple[float, float, float] = TRUE_LAW, elements: Mapping[str, float] | None = None):
        self.w = tuple(float(a) for a in w)
        self.e = _elements(elements)
        m = matrices(self.e)
        self._Einv = np.linalg.inv(m["E"])
        self._JR = m["J"] - m["R"]
        self._B = m["B"][:, 0]
        self._guess = (0.0, 0.0)

    def branch(self, v3: float) -> tuple[float, float]:
        """``(i, v)`` of the nonlinear branch at node voltage ``v3``."""
        self._guess = branch_solve(v3, self.w, self.e["R4"], self._guess)
        return self._guess

    def rhs(self, x: Array, vin: float) -> Array:
        """``ẋ`` at state ``x`` (5,) and input ``vin``."""
        i, _ = self.branch(x[2])
        f = self._JR @ x + self._B * vin
        f[2] -= i
        return self._Einv @ f


def simulate(
    t: Array,
    vin: Array | Callable[[float], float],
    w: tuple[float, float, float] = TRUE_LAW,
    elements: Mapping[str, float] | None = None,
    x0: Array | None = None,
    hold: str = "zoh",
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> CauerTrajectory:
    """Reference solution by ``scipy.integrate.solve_ivp`` (DOP853).

    Parameters
    ----------
    t : array_like, shape (N,)
        Increasing output times.
    vin : array_like (N,) or callable
        Input samples at ``t`` — held constant on ``[t_k, t_{k+1})`` (``hold="zoh"``, as in
        co-simulation) or linearly interpolated (``hold="linear"``) — or a function ``vin(t)``.
    w, elements, x0
        Law, element overrides, initial state (default zero).
    rtol, atol : float
        Tolerances of the solver.
    """
    from scipy.integrate import solve_ivp

    t = np.asarray(t, dtype=float)
    circuit = Circuit(w, elements)
    x = np.zeros(5) if x0 is None else np.asarray(x0, dtype=float).copy()
    X = np.empty((len(t), 5))
    X[0] = x
    if callable(vin):
        sol = solve_ivp(lambda s, y: circuit.rhs(y, float(vin(s))), (t[0], t[-1]), x,
                        method="DOP853", t_eval=t, rtol=rtol, atol=atol)
        if not sol.success:
            raise ComputationError(f"reference solve failed: {sol.message}")
        X = sol.y.T
        u = np.array([float(vin(s)) for s in t])
    else:
        u = np.asarray(vin, dtype=float)
        if u.shape != t.shape:
            raise InvalidInputError(f"vin must have the shape of t {t.shape}, got {u.shape}.")
        if hold not in ("zoh", "linear"):
            raise InvalidInputError(f"hold must be 'zoh' or 'linear', got {hold!r}.")
        for k in range(len(t) - 1):
            t0, t1, u0, u1 = t[k], t[k + 1], u[k], u[k + 1]
            if hold == "zoh":
                f = lambda s, y, u0=u0: circuit.rhs(y, u0)
            else:
                f = lambda s, y, t0=t0, t1=t1, u0=u0, u1=u1: circuit.rhs(
                    y, u0 + (u1 - u0) * (s - t0) / (t1 - t0)
                )
            sol = solve_ivp(f, (t0, t1), x, method="DOP853", rtol=rtol, atol=atol)
            if not sol.success:
                raise ComputationError(f"reference solve failed on [{t0}, {t1}]: {sol.message}")
            x = sol.y[:, -1]
            X[k + 1] = x
    iv = np.array([circuit.branch(v3) for v3 in X[:, 2]])
    return CauerTrajectory(t, X, iv[:, 0], iv[:, 1], circuit.e["R4"] * iv[:, 0], u)
