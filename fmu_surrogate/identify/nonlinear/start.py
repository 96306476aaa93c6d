"""The linear start of a nonlinear fit, in the wiring of the linear fit.

A fitted :class:`~fmu_surrogate.identify.LinearPHIdentifier` is a pH core, the wiring of its
ports to the data's variables (a :class:`~fmu_surrogate.ph.PortMap`: pairing, orientation,
modulating inputs, measured outputs, the constant-source port of the offsets) and an initial
state or rule (each run at the equilibrium of its first inputs), whether fitted to a dataset or
to arrays (:func:`~fmu_surrogate.identify.linear.ported_fit.ported_surrogate` of its columns,
``u1 …``, ``y1 …``).  The nonlinear fit keeps the wiring and replaces the core: :func:`linear_start` brings the
core to energy coordinates (``Q = I``, :func:`~.parametrisation.energy_coordinates`), pads it to
the nonlinear model's order with states that nothing drives, and writes the measured outputs
``Cx x + Du u_ext + cy`` as ``C_m x + D_m u_ph`` in the pH ports (the constant-source port holds
``cy``), so that the fit works in pH ports throughout and :meth:`LinearStart.ports_for` gives
the wiring back for the fitted core.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.ported_fit import ported_surrogate
from fmu_surrogate.identify.nonlinear.parametrisation import (
    NonlinearFitError,
    energy_coordinates,
    to_system,
)
from fmu_surrogate.ph import (
    ConvergenceError,
    LinearPH,
    PortedSystem,
    PortMap,
    StaticLaw,
    simulate,
)
from fmu_surrogate.ph.simulation.equilibrium import equilibrium

Array = NDArray[np.float64]

__all__ = ["TURN_PERIODS", "LinearStart", "linear_start", "linear_states", "model_states",
           "turn_directions", "with_affine"]

#: the periods a periodic ridge starts with, in units of the integral of a port's output: one
#: turn of an angle in rad, in degrees, in turns, and of a speed in rpm integrated over seconds
TURN_PERIODS = (2.0 * np.pi, 360.0, 1.0, 60.0)


@dataclass(frozen=True)
class LinearStart:
    """The linear fit as the nonlinear fit's start (module doc).

    Parameters
    ----------
    lin : dict
        ``J, R, G, P, S, N, x0`` in energy coordinates, padded to ``n`` states.
    surrogate : PortedSystem
        The linear fit itself (its errors are reported next to the nonlinear model's).
    ports : PortMap
        The wiring (``Cx`` of the linear fit's coordinates).
    measured : ndarray of int
        Rows of the external outputs that are measured outputs (no pH port behind them).
    Cm, Dm : ndarray, shape (k, n), (k, m)
        The measured outputs ``C_m x + D_m u_ph`` in energy coordinates.
    learn_x0 : bool
        Whether the linear fit learned its initial state (the nonlinear fit then does too).
    steady : bool
        Whether each run starts at the equilibrium of its first inputs (the linear fit's rule,
        :mod:`~fmu_surrogate.identify.linear.steady_start`; the nonlinear fit's too).
    """

    lin: dict[str, Array]
    surrogate: PortedSystem
    ports: PortMap
    measured: NDArray[np.int64]
    Cm: Array
    Dm: Array
    learn_x0: bool
    steady: bool = False

    @property
    def n_states(self) -> int:
        """Order of the (padded) start."""
        return self.lin["J"].shape[0]

    @property
    def bare(self) -> bool:
        """Whether the wiring adds nothing to the pH core: the external variables are its ports
        (``Tu = Ty = I``), no constant source, no measured output, runs from a state."""
        p, eye = self.ports, np.eye(self.ports.n_ports)
        return (not self.steady and p.Tu.shape == p.Ty.shape == eye.shape
                and np.array_equal(p.Tu, eye) and np.array_equal(p.Ty, eye)
                and not (p.cu.any() or p.cy.any() or p.Du.any() or p.Cx.any()))

    @property
    def constant_ports(self) -> NDArray[np.int64]:
        """The ports fed by a constant source (``Tu`` row zero, ``cu`` not): the offsets."""
        return np.flatnonzero(~np.any(self.ports.Tu != 0, axis=1) & (self.ports.cu != 0))

    def port_inputs(self, u_ext: Array) -> Array:
        """``u_ph = Tu u_ext + cu``; ``(K, k_in) -> (K, m)``."""
        return u_ext @ self.ports.Tu.T + self.ports.cu

    def ports_for(self, Cm: Array, Dm: Array, law: StaticLaw | None = None,
                  sensors: NDArray[np.int64] | None = None, Cd: Array | None = None) -> PortMap:
        """The wiring with the measured outputs ``C_m x + C_d ẋ + D_m u_ph`` of a fitted core.

        Parameters
        ----------
        Cm, Dm : ndarray, shape (k, n), (k, m)
        law : StaticLaw, optional
            The fitted static law of the modulating inputs (:mod:`.input_law`).
        sensors : ndarray of int, optional
            Measured outputs that also read the effort, ``K_m z(x)``: the core's sensor ports
            (:func:`.parametrisation.sensor_rows`), one after the other behind its ports, with
            their inputs held at zero and their outputs added to these measured outputs.
        Cd : ndarray, shape (k, n), optional
            How the measured outputs read the state's rate (zero if not given).
        """
        p = self.ports
        Cx = np.zeros((len(p.output_names), Cm.shape[1]))
        Cdx = np.zeros_like(Cx)
        Du, cy = np.zeros_like(p.Du), np.zeros_like(p.cy)
        Cx[self.measured] = Cm
        if Cd is not None:
            Cdx[self.measured] = Cd
        Du[self.measured] = Dm @ p.Tu
        cy[self.measured] = Dm @ p.cu
        rows = np.zeros(0, dtype=np.int64) if sensors is None else np.asarray(sensors)
        if not rows.size:
            return dataclasses.replace(p, Cx=Cx, Cdx=Cdx, Du=Du, cy=cy, law=law)
        s = rows.size
        Ty = np.hstack([p.Ty, np.zeros((p.Ty.shape[0], s))])
        Ty[self.measured[rows], p.Ty.shape[1] + np.arange(s)] = 1.0
        return dataclasses.replace(p, Tu=np.vstack([p.Tu, np.zeros((s, p.Tu.shape[1]))]),
                                   cu=np.concatenate([p.cu, np.zeros(s)]), Ty=Ty, Cx=Cx, Cdx=Cdx,
                                   Du=Du, cy=cy, law=law)


def _pad(lin: dict[str, Array], n: int) -> dict[str, Array]:
    """States ``r … n−1`` added with no coupling (zero rows and columns, zero initial state)."""
    r = lin["J"].shape[0]
    if n == r:
        return lin
    out = dict(lin)
    for key in ("J", "R"):
        M = np.zeros((n, n))
        M[:r, :r] = lin[key]
        out[key] = M
    for key in ("G", "P"):
        M = np.zeros((n, lin[key].shape[1]))
        M[:r] = lin[key]
        out[key] = M
    out["x0"] = np.concatenate([lin["x0"], np.zeros(n - r)])
    return out


def _array_names(est: Any) -> tuple[list[str], list[str], None, None]:
    """The default names of the columns of a fit to arrays: as many outputs as inputs (its
    power pairs), ``u1 … uk`` and ``y1 … yk``."""
    k = int(getattr(est, "n_inputs_", est.system_.n_inputs))
    identity = PortMap.identity(k)
    return list(identity.input_names), list(identity.output_names), None, None


def linear_start(est: Any, n: int | None, names: tuple | None = None) -> LinearStart:
    """The start of a nonlinear fit from a fitted linear estimator (module doc).

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted (``fit`` or ``fit_dataset``).
    n : int or None
        Order of the nonlinear model (``None``: the linear fit's, at least 1).
    names : tuple, optional
        ``(inputs, outputs, input units, output units)`` of a fit to arrays (default
        ``u1 … uk``, ``y1 … yk``: :meth:`~fmu_surrogate.ph.PortMap.identity`).

    Returns
    -------
    LinearStart

    Raises
    ------
    NonlinearFitError
        ``n`` below the linear fit's order, or a wiring whose power outputs read the state or
        the inputs directly.
    """
    core = est.system_
    r = core.n_states
    n = max(r, 1) if n is None else int(n)
    if n < r:
        raise NonlinearFitError(f"n_states = {n} is below the order {r} of the linear start; "
                                f"choose n_states >= {r} (or None for the linear fit's order).")
    fitted_names = getattr(est, "names_", None)
    nm = fitted_names or names or _array_names(est)
    # a fit to arrays has its wiring too (power ports' signs, the offsets' constant source, the
    # equilibrium start), named as the data's columns
    sur = est.to_surrogate() if fitted_names else ported_surrogate(est, *nm)
    if isinstance(sur, PortedSystem):
        ports, x0 = sur.ports, np.asarray(sur.x0, dtype=float)
    else:
        m = core.n_inputs
        ports = PortMap.identity(m, nm[0], nm[1], n_states=r, input_units=nm[2],
                                 output_units=nm[3])
        x0 = np.asarray(getattr(est, "x0_", np.zeros(r)), dtype=float)
    if ports.n_states != r:
        ports = dataclasses.replace(ports, Cx=np.zeros((len(ports.output_names), r)),
                                    Cdx=np.zeros((len(ports.output_names), r)))
    steady = isinstance(sur, PortedSystem) and sur.initial == "equilibrium"
    surrogate = PortedSystem(core, ports, x0, initial="equilibrium" if steady else "state")
    measured = np.flatnonzero(~np.any(ports.Ty != 0, axis=1))
    power = np.setdiff1d(np.arange(len(ports.output_names)), measured)
    if ports.Cx[power].any() or ports.Du[power].any() or ports.cy[power].any():
        raise NonlinearFitError("the linear fit's wiring adds state, input or offset terms to "
                                "outputs conjugate to a port; the nonlinear fit keeps those "
                                "outputs pure port outputs: fit the linear start with "
                                "fit_dataset (its wiring has them only on measured outputs).")
    lin = energy_coordinates(core, x0)
    C = lin["C"]  # x̃ = Cᵀx: a row c of Cx reads c x = c C⁻ᵀ x̃
    Cm = np.linalg.solve(C, ports.Cx[measured].T).T
    Cm = np.hstack([Cm, np.zeros((len(measured), n - r))])
    A = np.column_stack([ports.Tu, ports.cu])  # D_m [Tu | cu] = [Du | cy]
    rhs = np.column_stack([ports.Du[measured], ports.cy[measured]])
    Dm = np.linalg.lstsq(A.T, rhs.T, rcond=None)[0].T if len(measured) else \
        np.zeros((0, ports.n_ports))
    result = getattr(est, "result_", None)
    learn_x0 = "x0" in tuple(getattr(result, "fitted", ())) or bool(np.any(x0))
    return LinearStart(_pad(lin, n), surrogate, ports, measured, Cm, Dm,
                       learn_x0 and n > 0 and not steady, steady and n > 0)



def with_affine(start: LinearStart, affine: Array) -> LinearStart:
    """``start`` with the affine map ``affine`` ``[Du | cy]`` (k_out, k_in + 1) of the external
    inputs added to its outputs: to the measured outputs' ``D_m``; to a power output through
    the core's skew feedthrough ``N`` between its port and the ports that are not power ports
    (modulating inputs, the constant source), whose outputs the wiring does not show.  What
    those ports cannot carry (a map of a power input into a power output) is left out.

    Parameters
    ----------
    start : LinearStart
    affine : ndarray, shape (k_out, k_in + 1)

    Returns
    -------
    LinearStart
    """
    p = start.ports
    A = np.column_stack([p.Tu, p.cu])  # u_ph = A [u_ext; 1]
    Dm = start.Dm
    if len(start.measured):
        Dm = Dm + np.linalg.lstsq(A.T, affine[start.measured].T, rcond=None)[0].T
    lin = dict(start.lin)
    power = np.any(p.Ty != 0, axis=0)
    other = np.flatnonzero(~power)
    N = np.array(lin["N"], dtype=float)
    for o in np.setdiff1d(np.arange(len(p.output_names)), start.measured):
        if not other.size or not np.any(affine[o]):
            continue
        (port,) = np.flatnonzero(p.Ty[o])
        # Ty[o, port] ΔD[port, other] A[other] = affine[o];  D = S − N:  ΔN = −ΔD, skew
        dD = np.linalg.lstsq(A[other].T, affine[o] / p.Ty[o, port], rcond=None)[0]
        N[port, other] -= dD
        N[other, port] += dD
    lin["N"] = N
    return dataclasses.replace(start, lin=lin, Dm=Dm)


def turn_directions(A: Array, G: Array, periods: tuple[float, ...] = TURN_PERIODS
                    ) -> list[Array]:
    """Start directions ``w`` of a periodic ridge: ``wᵀx̃ = (2π / P) ∫ y_j dt``, a turn every
    period ``P`` of the integral of port ``j``'s output (an angle whose rate the port reads).

    Along the linear start ``ẋ̃ = (J̃ − R̃) x̃ + G̃ u``, whose collocated output is
    ``y = G̃ᵀx̃``, the coordinate ``vᵀx̃`` integrates ``y_j`` where ``(J̃ − R̃)ᵀ v = g̃_j`` (up to
    the input's direct share ``vᵀg̃_j u``, zero for a mass or an inertia): a pendulum's angle,
    whose energy repeats each turn.  Solved in the least-squares sense, for every port and
    every period.

    Parameters
    ----------
    A, G : ndarray, shape (n, n), (n, m)
        ``J̃ − R̃`` and ``G̃`` of the linear part, in energy coordinates.
    periods : tuple of float
        The periods ``P``.

    Returns
    -------
    list of ndarray, shape (n,)
        Port by port, period by period; none for a port whose output integrates into no state.
    """
    out = []
    for j in range(G.shape[1]):
        v = np.linalg.lstsq(A.T, G[:, j], rcond=None)[0]
        if np.linalg.norm(v) > 0 and np.all(np.isfinite(v)):
            out += [(2.0 * np.pi / P) * v for P in periods]
    return out


def linear_states(lin: dict[str, Array], train: list[tuple], steady: bool) -> list[Array]:
    """The linear start's states along the experiments ``train`` (``(t, u_ph, y, hold)``),
    from its ``x0`` or (``steady``) each run's equilibrium of its first inputs.

    Parameters
    ----------
    lin : dict
        The start's ``J, R, G, P, S, N, x0`` (energy coordinates).
    train : list of tuple
    steady : bool

    Returns
    -------
    list of ndarray, shape (K, n)
    """
    sys = LinearPH(lin["J"], lin["R"], np.eye(lin["J"].shape[0]), lin["G"], P=lin["P"],
                   S=lin["S"], N=lin["N"])
    return [simulate(sys, t, u, equilibrium(sys, u[0]) if steady else lin["x0"], hold=h).x
            for t, u, _, h in train]


def model_states(layout: Any, theta: Array, lin: dict[str, Array],
                 train: list[tuple], steady: bool = False) -> list[Array]:
    """The states of the model ``θ`` along the experiments ``train`` (its sensor ports' inputs
    held at zero), from its learned initial state or the linear start's, or (``steady``) each
    run's equilibrium of its first inputs (Newton from the linear start's).

    Parameters
    ----------
    layout : Layout
        The model's layout (:mod:`.parametrisation`).
    theta : ndarray
        Its parameters (shooting states after the model's, ignored).
    lin : dict
        The linear start (:func:`linear_states`).
    train : list of tuple
    steady : bool

    Returns
    -------
    list of ndarray, shape (K, n)
    """
    layout = dataclasses.replace(layout, n_shoot=0)
    theta = theta[:layout.size]
    system = to_system(layout, theta)
    x0 = np.asarray(layout.unpack(theta)["x0"]) if layout.learn_x0 else lin["x0"]
    pad = system.n_inputs - lin["G"].shape[1]
    firsts = linear_states(lin, [(t[:2], u[:2], y, h) for t, u, y, h in train], True) \
        if steady else [None] * len(train)
    out = []
    for (t, u, _, h), guess in zip(train, firsts):
        U = np.hstack([u, np.zeros((len(t), pad))])
        try:
            start = x0 if guess is None else equilibrium(system, U[0], guess[0])
        except ConvergenceError:  # none near the linear start's: from that
            start = guess[0]
        out.append(simulate(system, t, U, start, hold=h).x)
    return out
