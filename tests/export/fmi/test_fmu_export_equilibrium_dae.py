"""Exported pH-DAE surrogates (a singular ``E``: algebraic states) that start at the equilibrium
of their first inputs (``PortedSystem(..., initial="equilibrium")``).

The core is the RC network's index-1 structure (``fmu_surrogate.benchmarks.rc_network``,
``E = diag(1, 0, 0)``): one capacitor charge ``x1`` behind a conductance ``G = 1``, a source
voltage ``x2 = u`` and the current ``x3`` through it, the pH output.  Its equilibrium
``0 = (J − R) z(x) + B u`` is the charged capacitor: ``z1 = z2 = u`` and ``z3 = 0`` — with a
linear effort ``z = Q x`` (``Q = diag(2, 1, 1)``) ``x = (u / 2, u, 0)``, with the hardening one
``z1 = x1 + x1³`` the root of ``x1 + x1³ = u``.  The FMU runs Newton's method on the whole flow,
the algebraic rows with the differential ones, so its start is consistent as it is; ``ph`` finds
it as :func:`fmu_surrogate.ph.simulation.equilibrium.equilibrium` does.  A linear DAE as a
``LinearPH`` with a singular ``E`` is refused by the exporter whatever its rule, with the form
that exports (``PHDAE`` with a ``LinearEffort``) — which starts where the ``LinearPH`` does.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from fmu_surrogate.benchmarks import rc_network
from fmu_surrogate.export import ExportError, export_fmu
from fmu_surrogate.ph import (
    PHDAE,
    CompositeEffort,
    LinearEffort,
    LinearPH,
    PortedSystem,
    PortMap,
    TermEffort,
    simulate,
)

HC, STEP, T_END = 0.1, 0.02, 2.0
U0 = 1.5  # the first input
X_START = np.array([0.3, -0.2, 0.1])  # Newton's start: away from the equilibrium, inconsistent
Q = np.diag([2.0, 1.0, 1.0])
#: u drives the one port; the outputs are its current (the pH output z3) and the charge x1
PORTS = PortMap(("u",), ("i", "q"), ("V",), ("A", "C"), Tu=[[1.0]], cu=[0.0],
                Ty=[[1.0], [0.0]], Cx=[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], Du=np.zeros((2, 1)),
                cy=[0.0, 0.0])


def dae(kind):
    """The RC structure with a linear effort ``Q x`` or the hardening capacitor."""
    m = rc_network.matrices()
    if kind == "linear":
        eff = LinearEffort(Q, m["E"])
    else:
        cap = TermEffort([[{"kind": "power", "coef": 1.0, "exponent": 1},
                           {"kind": "power", "coef": 1.0, "exponent": 3}]])
        rest = LinearEffort(np.eye(2), np.zeros((2, 2)))
        eff = CompositeEffort([cap, rest], [1, 2], [cap.hamiltonian, rest.hamiltonian])
    core = PHDAE(m["E"], m["J"], m["R"], m["B"], eff, hamiltonian=eff.hamiltonian,
                 input_names=["u"], output_names=["i"])
    return PortedSystem(core, PORTS, X_START, initial="equilibrium")


def at_rest(kind, u):
    """The equilibrium from the circuit: the capacitor charged to the source's voltage."""
    x1 = u / 2.0 if kind == "linear" else brentq(lambda s: s + s**3 - u, -10, 10, xtol=1e-16,
                                                  rtol=4 * np.finfo(float).eps)
    return np.array([x1, u, 0.0])


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("equilibrium-dae")
    return {(kind, v): export_fmu(dae(kind), d / f"{kind}{v}.fmu", fmi_version=v, step=STEP)
            for kind in ("linear", "nonlinear") for v in (2, 3)}


def _signal(t, U):
    sig = np.zeros(t.size, dtype=[("time", float), ("u", float)])
    sig["time"], sig["u"] = t, U
    return sig


def _states(r):
    return np.column_stack([r["x1"], r["x2"], r["x3"]])


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_co_simulation_of_a_dae_starts_at_its_equilibrium_and_reproduces_ph_simulate(
        fmus, kind, version):
    from fmpy import simulate_fmu

    sur = dae(kind)
    t = np.arange(0.0, T_END + HC / 2, HC)
    U = U0 + 0.5 * np.sin(3.0 * t)
    r = simulate_fmu(str(fmus[kind, version]), fmi_type="CoSimulation", stop_time=T_END,
                     output_interval=HC, input=_signal(t, U), output=["x1", "x2", "x3", "i", "q"])
    X = _states(r)
    x_eq = sur.initial_state(U[:1])
    # the start: ph's equilibrium (Newton with central differences on the same flow, both to
    # 1e-12 of the state; measured 0 for both cores) and the circuit's (measured 0 (linear) and
    # 1.1e-16 (nonlinear)), not x_start
    assert np.abs(X[0] - x_eq).max() <= 1e-14 * np.abs(x_eq).max()
    assert np.abs(X[0] - at_rest(kind, U0)).max() <= 1e-14 * np.abs(x_eq).max()
    assert np.abs(X[0] - X_START).max() > 1.0
    assert abs(r["i"][0]) <= 1e-14  # no current at rest (measured 0)
    # then the AVF steps of ph.simulate from there, on the FMU's internal grid
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    tr = simulate(sur, tf, np.concatenate([np.repeat(U[:-1], k), U[-1:]]), hold="zoh")
    # the differential state and its reading: the same steps and Newton iterations in another
    # summation order, bounded by Newton's tolerance 1e-12 (measured 1.2e-16 (linear) and
    # 1.1e-16 (nonlinear) of x1 up to 0.91 and 0.98)
    scale = np.abs(tr.x[:, 0]).max()
    assert np.abs(r["x1"] - tr.x[::k, 0]).max() <= 1e-12 * scale
    assert np.abs(r["q"] - tr.x[::k, 0]).max() <= 1e-12 * scale
    # the algebraic source voltage at t_k is the input the FMU held over the step before
    # (ph.simulate's the new one, hold="zoh" jumps at the node): exact (measured 0)
    assert np.array_equal(r["x2"], np.concatenate([U[:1], U[:-1]]))
    assert abs(r["x1"][-1] - x_eq[0]) > 0.05  # it moved off the start (measured 0.11, 0.14)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_model_exchange_of_a_dae_starts_at_its_equilibrium_and_stays_there(fmus, kind,
                                                                           version):
    """fmpy's CVode: U0 held until t = 1, then a step to U1; the capacitor rests, charged to U0,
    then charges to U1 as ``x1' = −G (z1(x1) − U1)`` (the algebraic rows solved: x2 = U1,
    x3 = x1' — scipy's reference)."""
    from fmpy import simulate_fmu

    sur = dae(kind)
    U1, t_step = 0.4, 1.0
    sig = _signal(np.array([0.0, t_step, t_step, T_END]), np.array([U0, U0, U1, U1]))
    r = simulate_fmu(str(fmus[kind, version]), fmi_type="ModelExchange", stop_time=T_END,
                     output_interval=HC, input=sig, relative_tolerance=1e-10,
                     output=["x1", "x2", "x3"], record_events=False)
    X = _states(r)
    x_eq = sur.initial_state([U0])
    # the start as in co-simulation (measured 0 and 1.1e-16 against ph's and the circuit's)
    assert np.abs(X[0] - x_eq).max() <= 1e-14 * np.abs(x_eq).max()
    assert np.abs(X[0] - at_rest(kind, U0)).max() <= 1e-14 * np.abs(x_eq).max()
    rest = r["time"] < t_step - 1e-9
    # at rest while U0 holds: no drift beyond round-off (measured 0); at t = 1 the algebraic
    # states already follow U1, the charge not yet
    assert np.abs(X[rest] - x_eq).max() <= 1e-13 * np.abs(x_eq).max()
    assert abs(r["x1"][rest.sum()] - x_eq[0]) <= 1e-13 * np.abs(x_eq).max()
    z1 = (lambda x1: 2.0 * x1) if kind == "linear" else (lambda x1: x1 + x1**3)
    moving = r["time"] >= t_step - 1e-9
    ref = solve_ivp(lambda _t, x1: [-(z1(x1[0]) - U1)], (t_step, T_END), [x_eq[0]],
                    t_eval=r["time"][moving], rtol=1e-12, atol=1e-12, method="DOP853")
    # CVode at rtol 1e-10 on the differential state: measured 2.4e-10 (linear) and 5.3e-10
    # (nonlinear) of x1, FMI 2 and 3 alike, its global error a few tolerances over 10 output
    # intervals
    x1 = r["x1"][moving]
    assert np.abs(x1 - ref.y[0]).max() <= 5e-9 * np.abs(ref.y[0]).max()
    after = r["time"] > t_step + 1e-9
    # the algebraic states solved from the rows at each point: x2 = U1 exactly, x3 the current
    # x1' = −(z1(x1) − U1) at the FMU's x1 (measured 0 and 2.2e-16)
    assert np.array_equal(r["x2"][after], np.full(after.sum(), U1))
    assert np.abs(r["x3"][after] + (z1(r["x1"][after]) - U1)).max() <= 1e-14
    assert abs(r["x1"][-1] - x_eq[0]) > 0.1  # the step was seen (measured 0.41, 0.48)


def test_a_linear_dae_is_refused_with_the_form_that_exports_and_starts_alike(tmp_path):
    """A ``LinearPH`` with a singular ``E`` and the rule: the exporter refuses it (its plain
    midpoint steps are not the FMU's) and names ``PHDAE(E, J, R, B, LinearEffort(Q, E))``; that
    form starts at the equilibrium the ``LinearPH``'s one linear solve finds."""
    m = rc_network.matrices()
    lin = PortedSystem(LinearPH(m["J"], m["R"], Q, m["B"], E=m["E"]), PORTS, X_START,
                       initial="equilibrium")
    with pytest.raises(ExportError, match=r"singular E.*PHDAE\(E, J, R, B, LinearEffort\(Q, E\)"):
        export_fmu(lin, tmp_path / "refused.fmu")
    assert not (tmp_path / "refused.fmu").exists()
    from fmpy import simulate_fmu

    fmu = export_fmu(dae("linear"), tmp_path / "dae.fmu", step=STEP)
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=HC, output_interval=HC,
                     input=_signal(np.array([0.0, HC]), np.array([-0.8, -0.8])),
                     output=["x1", "x2", "x3"])
    # (J − R) Q is regular here: LAPACK's solve against the FMU's Newton on a linear flow, one
    # step from x_start and a second that moves nothing (measured 0)
    x = lin.initial_state([-0.8])
    assert np.array_equal(x, [-0.4, -0.8, 0.0])
    assert np.abs(_states(r)[0] - x).max() <= 1e-15
