"""Modelica export: the text parses (Modelica 3.5 grammar), is balanced, uses what it declares,
and its equations and functions evaluate to the ph objects' numbers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fmu_surrogate.benchmarks import rc_network
from fmu_surrogate.export.expressions.effort import ExportError, UnsupportedEffortError
from fmu_surrogate.export.modelica import (
    KEYWORDS,
    export_modelica,
    modelica_identifier,
    modelica_model,
)
from fmu_surrogate.ph import (
    PHDAE,
    KernelEffort,
    LinearPH,
    PartlyKnownEffort,
    PolynomialEffort,
    PortedSystem,
    TermEffort,
    interconnect,
    save,
)
from tests.export import _modelica_check as mc

REPO = Path(__file__).resolve().parents[2]
# measured: equation residuals and function values vs the ph objects ≤ 1.0e-15 relative (the
# checker evaluates the Modelica text with numpy in the model's own order of operations)
RTOL = 2e-14


def _rng(seed):
    return np.random.default_rng(seed)


def _skew(r, n):
    A = r.normal(size=(n, n))
    return A - A.T


def linear_ph(seed=0, n=4, m=2, E=None, **names):
    r = _rng(seed)
    A = r.normal(size=(n, n))
    L = r.normal(size=(n, n)) * 0.3
    return LinearPH(_skew(r, n), L @ L.T, A @ A.T + n * np.eye(n), r.normal(size=(n, m)), E=E,
                    **names)


def kernel_dae(seed=1, N=9, hamiltonian=True, constraint=True):
    """n = 5, differential (0, 2, 3), E = diag(E_dd, 0) with M = E_dd^{-T}, one input."""
    r = _rng(seed)
    d = np.array([0, 2, 3])
    W, c = r.normal(size=(N, 5)), r.normal(size=5)
    W[:, d], c[d] = 0.0, 0.0
    Edd = np.eye(3) + 0.2 * r.normal(size=(3, 3))
    kw = {"differential": d, "h_weights": r.normal(size=(2, N, 3)),
          "h_lengthscale": r.uniform(0.5, 2.0, (2, 3)), "effort_map": np.linalg.inv(Edd).T,
          "h_linear": r.normal(size=3), "h_offset": 0.3}
    if constraint:
        kw.update(c_weights=r.normal(size=(N, 3)), c_lengthscale=r.uniform(0.5, 2.0, 3),
                  c_anchor=r.normal(size=(N, 2)), c_shift=r.normal(size=2))
    ke = KernelEffort(r.normal(size=(N, 5)), W, r.uniform(0.5, 2.0, 5), c, **kw)
    E = np.zeros((5, 5))
    E[np.ix_(d, d)] = Edd
    L = 0.3 * r.normal(size=(5, 5))
    return PHDAE(E, _skew(r, 5), L @ L.T, r.normal(size=(5, 1)), effort=ke,
                 hamiltonian=ke.hamiltonian if hamiltonian else None,
                 input_names=["i.in"], output_names=["v.out"])


def coupled():
    """A linear and a kernel system joined by a gyrator; the kernel system's port stays open."""
    a = linear_ph(seed=2, n=2, m=1)
    b = kernel_dae(seed=3, constraint=False)
    b2 = PHDAE(b.E, b.J, b.R, np.column_stack([b.B, np.ones(5)]), effort=b.effort_function,
               hamiltonian=b._hamiltonian)
    return interconnect([a, b2], [[0.0, 1.5], [-1.5, 0.0]], [[0], [0]], names=["a", "b"])


def closed():
    """Both ports of two oscillators coupled: no input remains."""
    osc = linear_ph(seed=4, n=2, m=1)
    return interconnect([osc, osc], [[0.0, 1.0], [-1.0, 0.0]], [[0], [0]])


def law():
    """A discovered mechanical law m q̈ + c q̇ + k(q) = F: every term kind in k, H exact."""
    r = _rng(8)
    k = [{"kind": "power", "exponent": 1, "coef": 10.0},
         {"kind": "power", "exponent": 3, "coef": 1e2}, {"kind": "sin", "coef": 0.5},
         {"kind": "cos", "coef": 0.2},
         {"kind": "gaussian", "centers": r.uniform(-1, 1, 12), "weights": r.normal(size=12),
          "length_scale": 0.3}]
    te = TermEffort([k, [{"kind": "power", "exponent": 1, "coef": 1 / 1.5}]])
    return PHDAE(np.eye(2), [[0, 1], [-1, 0]], np.diag([0.0, 0.2]), [[0.0], [1.0]], te,
                 hamiltonian=te.hamiltonian, input_names=["F"], output_names=["v"])


def rc_known():
    """The RC network's index-1 structure: a GP Hamiltonian of x1, known z2 = x2, z3 = x3."""
    r = _rng(9)
    ke = KernelEffort(r.uniform(0.5, 3.0, size=(6, 3)), np.zeros((6, 3)), 1.0,
                      differential=[0], h_weights=0.3 * r.normal(size=(6, 1)),
                      h_lengthscale=[1.2], h_linear=[1.0])
    eff = PartlyKnownEffort(ke, PolynomialEffort.from_terms(3, rc_network.known_effort()))
    return PHDAE(**rc_network.matrices(), effort=eff, hamiltonian=eff.hamiltonian,
                 input_names=["u"], output_names=["y"])


def nonlinear():
    """A NonlinearPH without feedthrough: quartic and logcosh ridges (the second preloaded),
    two power-law dampers."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation

    r = _rng(10)
    A = r.normal(size=(3, 3))
    eff = ConvexEffort(A @ A.T + np.eye(3), ["quartic", "logcosh"], [0.6, 1.4],
                       r.normal(size=(2, 3)), [0.0, -0.5])  # the logcosh ridge preloaded
    diss = PowerDissipation(r.normal(size=(2, 3)), [0.8, 0.3], [1 / 3, 1.0], [0.01, 0.1])
    return NonlinearPH(_skew(r, 3), np.diag([0.1, 0.0, 0.2]), r.normal(size=(3, 2)), eff, diss,
                       input_names=["u1", "u2"], output_names=["y1", "y2"])


def turning():
    """A pendulum on a joint with viscous friction as a NonlinearPH: a periodic ridge taking the
    whole quadratic form along the angle (``H = p²/2 + k (1 − cos θ)``, ``k = 4.9``)."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH

    k = 4.9
    eff = ConvexEffort(np.eye(2), ["periodic"], [k], [[1.0 / np.sqrt(k), 0.0]])
    return NonlinearPH([[0.0, np.sqrt(k)], [-np.sqrt(k), 0.0]], np.diag([0.0, 0.5]),
                       [[0.0], [1.0]], eff, input_names=["tau"], output_names=["w"])


def stops():
    """A mass on a spring between end stops (``k = 2``, stops at ``±0.5``, contact stiffness
    ``k_c = 40``: a gap ridge ``w = (2, 0, 0)``, ``α = k_c/4``) coupled to a second mass whose
    contact is preloaded (its gap centred off rest, shift 0.25), both with viscous friction."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH

    eff = ConvexEffort(np.diag([2.0, 1.0, 0.5]), ["gap", "gap"], [10.0, 4.0],
                       [[2.0, 0.0, 0.0], [1.0, 0.0, -1.5]], [0.0, 0.25])
    J = [[0.0, 1.0, 0.0], [-1.0, 0.0, 1.0], [0.0, -1.0, 0.0]]
    return NonlinearPH(J, np.diag([0.0, 0.3, 0.1]), [[0.0], [1.0], [0.0]], eff,
                       input_names=["F"], output_names=["v"])


SYSTEMS = {
    "nonlinear": nonlinear,
    "stops": stops,
    "turning": turning,
    "law": law,
    "rc_known": rc_known,
    "linear": lambda: linear_ph(input_names=["F 1", "end"], output_names=["v.1", "x"]),
    "linear_dae": lambda: linear_ph(E=np.diag([1.0, 2.0, 0.0, 0.0])),
    "kernel_dae": kernel_dae,
    "kernel_no_h": lambda: kernel_dae(hamiltonian=False, constraint=False),
    "coupled": coupled,
    "closed": closed,
}


def _port_names(cls, typ):
    return [c.name for c in cls.components.values() if c.type.endswith(typ)]


def _values(system, cls, x, u, d):
    """Values of every unknown for states x, inputs u and state derivatives d, from ph."""
    z, y = system.effort(x), system.output(x)
    ins = _port_names(cls, "RealInput")
    outs = [n for n in _port_names(cls, "RealOutput")
            if n not in ("H", "energy_residual", "P_supplied", "P_dissipated")]
    vals = {"x": x, "z": z, "P_supplied": float(y @ u),
            "P_dissipated": float(system.dissipation_rate(z, u)),
            **dict(zip(ins, u)), **dict(zip(outs, y))}
    if system.n_inputs:
        vals["u"] = u
    der = {"x": d}
    if system.has_hamiltonian:
        vals.update(H=float(system.hamiltonian(x)), H_start=0.4, E_supplied=0.7,
                    E_dissipated=0.2)
        vals["energy_residual"] = vals["H"] - 0.4 - 0.7 + 0.2
        der.update(E_supplied=vals["P_supplied"], E_dissipated=vals["P_dissipated"])
    return vals, der


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_model_is_balanced_and_its_equations_hold(name):
    system = SYSTEMS[name]()
    cls = mc.model(modelica_model(system, "M"))
    assert cls.kind == "model" and cls.name == "M"
    r = _rng(5)
    n, m = system.n_states, system.n_inputs
    x, u, d = r.normal(size=n), r.normal(size=m), r.normal(size=n)
    vals, der = _values(system, cls, x, u, d)
    res = mc.residuals(cls, vals, der)
    # balanced: as many scalar equations as scalar unknowns
    assert sum(v.size for _, v in res) == sum(mc.unknowns(cls).values())
    known = {"H_start", *_port_names(cls, "RealInput")}  # a parameter, and the inputs
    assert set(mc.unknowns(cls)) == set(vals) - known
    scale = max(1.0, float(np.abs(system.flow(x, u)).max()))
    for text, v in res:
        if "der ( x )" in text:  # E der(x) − (J − R) z − B u at an arbitrary derivative
            expected = system.E @ d - system.flow(x, u)
            assert np.abs(v - expected).max() < RTOL * scale, text
        else:
            assert np.abs(v).max() < RTOL * scale, text
    if system.has_hamiltonian:
        (text, v), = mc.residuals(cls, {**vals, "H_start": vals["H"]}, der, initial=True)
        assert text == "H_start = H" and abs(v[0]) < RTOL
    # everything declared is used, in the model and in its functions (all of which take x,
    # though a linear effort's Jacobian does not depend on it; the derivative function takes
    # all inputs of the effort, as Modelica's derivative annotation prescribes)
    assert set(cls.components) <= mc.used_names(cls)
    effort_inputs = set(cls.classes["effort"].components)
    for fn in cls.classes.values():
        allowed = {"x"} | (effort_inputs if fn.name == "effortDerivative" else set())
        assert not mc.function_unused(fn) - allowed, fn.name


@pytest.mark.parametrize("name", ["linear", "kernel_dae", "coupled", "law", "rc_known",
                                  "nonlinear", "turning", "stops"])
def test_functions_evaluate_to_the_effort_jacobian_and_hamiltonian(name):
    system = SYSTEMS[name]()
    cls = mc.model(modelica_model(system, "M"))
    ev = mc.Evaluator(cls)
    fns = cls.classes

    def args(fn):
        return [ev.params[c.name] for c in fns[fn].components.values()
                if c.prefix == "input" and c.name not in ("x", "der_x")]

    for x in _rng(6).normal(size=(3, system.n_states)):
        scale = np.abs(system.effort_jacobian(x)).max()
        z = ev.call("effort", [x, *args("effort")], {})
        assert np.abs(z - system.effort(x)).max() < RTOL * np.abs(z).max()
        dz = ev.call("effortJacobian", [x, *args("effortJacobian")], {})
        assert np.abs(dz - system.effort_jacobian(x)).max() < RTOL * scale
        v = _rng(7).normal(size=system.n_states)
        dv = ev.call("effortDerivative", [x, *args("effort"), v], {})
        assert np.abs(dv - system.effort_jacobian(x) @ v).max() < RTOL * scale * 3
        H = ev.call("hamiltonian", [x, *args("hamiltonian")], {})
        assert abs(H - system.hamiltonian(x)) < RTOL * max(1.0, abs(H))


def test_gap_ridges_are_event_free_expressions_equal_to_the_effort():
    """End stops in Modelica: the clip as ``min``/``max`` and the step of the Jacobian as a
    ``noEvent`` conditional (the functions run inside Newton iterations); the model's
    functions, evaluated from the text, and the expression program they are rendered from give
    the ConvexEffort's ``z``, ``∂z/∂x`` and ``H`` within the gaps, at and beyond the stops."""
    from fmu_surrogate.export.expressions.effort import effort_expressions

    system = stops()
    eff = system.effort_function
    text = modelica_model(system, "M")
    assert text.count("min(max(") == 4  # two ridges, in effort and hamiltonian
    assert text.count("noEvent(if abs(") == 2 and "then 1.0 else 0.0)" in text
    ev = mc.Evaluator(mc.model(text))
    ex = effort_expressions(system)
    # states on a grid through both stops of both ridges (s₁ = 2 x₁, s₂ + 0.25 = x₁ − 1.5 x₃)
    g = np.linspace(-1.0, 1.0, 9)
    x = np.stack(np.meshgrid(g, [0.3], 0.5 * g), axis=-1).reshape(-1, 3)
    s = x @ eff.directions.T + eff.shifts
    assert np.any(np.abs(s) == 1.0) and np.any(np.abs(s) < 1) and np.any(np.abs(s) > 1)
    # the same operations as the class's but summed in the program's order (RTOL allows for
    # that); measured exact (0) on this grid, through the program and through the text
    z, dz, H = eff(x), eff.jacobian(x), eff.hamiltonian(x)
    assert _rel(ex.evaluate("z", x), z) < RTOL and _rel(ex.evaluate("H", x), H) < RTOL
    assert _rel(ex.evaluate("dz", x), dz) < RTOL
    fns = mc.model(text).classes
    for xi, zi, dzi, Hi in zip(x, z, dz, H):
        zm, dzm, Hm = (ev.call(f, [xi, *[ev.params[c.name] for c in fns[f].components.values()
                                           if c.prefix == "input" and c.name != "x"]], {})
                       for f in ("effort", "effortJacobian", "hamiltonian"))
        assert np.abs(zm - zi).max() <= RTOL * np.abs(z).max()
        assert np.abs(dzm - dzi).max() <= RTOL * np.abs(dz).max()
        assert abs(Hm - Hi) <= RTOL * np.abs(H).max()


def _rel(a, b):
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


def test_descriptor_is_declared_once_and_fixes_only_differential_states():
    text = modelica_model(SYSTEMS["linear_dae"](), "M")
    assert text.count("parameter Real E[4, 4]") == 1 and "effort_E" not in text
    assert "annotation (Evaluate = true)" in text and "E*der(x) = (J - R)*z + B*u;" in text
    assert "fixed = {true, true, false, false}" in text
    assert "  der(x) = (J - R)*z + B*u;" in modelica_model(SYSTEMS["linear"](), "M")


def test_derivative_annotation_names_the_data_as_constant():
    text = modelica_model(kernel_dae(), "M")
    ann = re.search(r"annotation\(derivative\((.*?)\) = effortDerivative\)", text).group(1)
    effort_inputs = re.search(r"function effort .*?output", text, re.DOTALL).group(0)
    data = re.findall(r"input Real (\w+)", effort_inputs)[1:]
    assert ann == ", ".join(f"zeroDerivative = {p}" for p in data)


def _functions_text(text):
    return text[text.index("  function effort "):text.index("end hamiltonian;")]


def test_kernel_sums_are_loops_over_parameter_arrays():
    system = kernel_dae(N=150)
    text = modelica_model(system, "Gp")
    assert "parameter Real centres[150, 5] = {{" in text
    assert text.count("for i in 1:150 loop") >= 4  # direct part and two H components, at least
    # the functions are the same for 10 centres apart from the sizes: only the data grows
    small = _functions_text(modelica_model(kernel_dae(N=10), "Gp"))
    assert _functions_text(text).replace("150", "10") == small
    cls = mc.model(text)
    ev = mc.Evaluator(cls)
    assert np.array_equal(ev.params["centres"], system.effort_function.X)  # exact literals


def test_port_names_are_sanitised_and_the_mapping_recorded():
    names = ["s1.F", "2nd", "end", "x", "F-1", "F_1", "Modelica", "effort"]
    r = _rng(8)
    sys_ = LinearPH(_skew(r, 3), np.zeros((3, 3)), np.eye(3), r.normal(size=(3, 8)),
                    input_names=names, output_names=[f"y {k}" for k in range(8)])
    text = modelica_model(sys_, "M")
    cls = mc.model(text)
    ins = _port_names(cls, "RealInput")
    assert ins == ["s1_F", "p2nd", "end_", "x_2", "F_1", "F_1_2", "Modelica_2", "effort_2"]
    for nm in ins + _port_names(cls, "RealOutput"):
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", nm) and nm not in KEYWORDS
    for orig, new in zip(names, ins):
        assert f"<tr><td>input</td><td>{orig}</td><td>{new}</td></tr>" in text
    assert "<tr><td>state</td><td>x2</td><td>x[2]</td></tr>" in text


def test_modelica_identifier():
    from modelicalang import v3_5

    assert set(v3_5.Syntax._keywords_) == KEYWORDS  # the grammar's reserved words
    assert modelica_identifier("a.b[1]") == "a_b_1"
    assert modelica_identifier("when") == "when_"
    assert modelica_identifier("_x") == "x"
    assert modelica_identifier("3") == "p3"
    assert modelica_identifier("µ") == "port"


def _repo_package_conventions():
    pkg = REPO / "modelica" / "FmuSurrogateBenchmarks"
    text = (pkg / "package.mo").read_text()
    return text.splitlines()[0], (pkg / "package.order").read_text().split()


def test_package_of_several_surrogates(tmp_path):
    root = export_modelica([linear_ph(), kernel_dae()], tmp_path, package="MySurrogates",
                           model_name=["Msd", "Rc"])
    assert root == tmp_path / "MySurrogates"
    first_line, order = _repo_package_conventions()
    assert first_line == "within;" and order  # the repository's own package, for reference
    pkg = (root / "package.mo").read_text()
    assert pkg.splitlines()[0] == "within;"
    tree = mc.parse(pkg)
    assert mc._text(tree).split()[:4] == ["within", ";", "package", "MySurrogates"]
    assert (root / "package.order").read_text().split() == ["Msd", "Rc"]
    for nm in ("Msd", "Rc"):
        cls = mc.model((root / f"{nm}.mo").read_text())
        assert cls.within == "MySurrogates" and cls.name == nm
    assert sorted(p.name for p in root.iterdir()) == ["Msd.mo", "Rc.mo", "package.mo",
                                                      "package.order"]


def test_surrogate_json_round_trip(tmp_path):
    system = kernel_dae()
    path = save(system, tmp_path / "rc-surrogate.json",
                units={"inputs": ["A"], "outputs": ["V"]},
                provenance={"source_fmu": {"name": "rc_network", "guid": "g", "sha256": "0"},
                            "method": "gp"})
    mo = export_modelica(path, tmp_path)
    assert mo == tmp_path / "rc_surrogate.mo"
    text = mo.read_text()
    assert 'RealInput i_in(unit = "A")' in text and 'RealOutput v_out(unit = "V")' in text
    assert "<code>rc_network</code>" in text
    cls = mc.model(text)
    ev = mc.Evaluator(cls)
    eff = system.effort_function
    for key, ref in (("E", system.E), ("J", system.J), ("B", system.B), ("centres", eff.X),
                     ("h_weights2", eff.h_weights[1]), ("h_offset", eff.h_offset)):
        assert np.array_equal(ev.params[key], ref), key  # bit for bit through JSON and .mo
    x, u, d = _rng(9).normal(size=5), _rng(10).normal(size=1), np.zeros(5)
    vals, der = _values(system, cls, x, u, d)
    scale = max(1.0, float(np.abs(system.flow(x, u)).max()))
    for text_eq, v in mc.residuals(cls, vals, der):
        if "der ( x )" not in text_eq:
            assert np.abs(v).max() < RTOL * scale, text_eq


class _Strange:
    def __call__(self, x):
        return x


def test_errors_name_the_problem(tmp_path):
    bad = linear_ph()
    bad.J[0, 1] = np.nan
    with pytest.raises(ExportError, match="matrix J contains NaN"):
        modelica_model(bad)
    nan_kernel = kernel_dae()
    nan_kernel.effort_function.h_weights[0, 0, 0] = np.nan
    with pytest.raises(ExportError, match="NaN"):
        export_modelica(nan_kernel, tmp_path / "a.mo")
    empty = kernel_dae(constraint=False)
    ke = empty.effort_function
    ke.X, ke.weights, ke.h_weights = np.zeros((0, 5)), np.zeros((0, 5)), np.zeros((2, 0, 3))
    with pytest.raises(ExportError, match="kernel expansion is empty"):
        export_modelica(empty, tmp_path / "a.mo")
    with pytest.raises(ExportError, match="model name 'my model' is not a valid Modelica"):
        export_modelica(linear_ph(), tmp_path / "a.mo", model_name="my model")
    with pytest.raises(ExportError, match="package name 'end'.*keyword"):
        export_modelica([linear_ph()], tmp_path, package="end")
    with pytest.raises(ExportError, match="need a package"):
        export_modelica([linear_ph(), linear_ph()], tmp_path)
    with pytest.raises(ExportError, match="distinct"):
        export_modelica([linear_ph(), linear_ph()], tmp_path, package="P", model_name=["A", "A"])
    with pytest.raises(ExportError, match="pass a pH system"):
        export_modelica(np.eye(2), tmp_path / "a.mo")
    strange = PHDAE(np.eye(2), np.zeros((2, 2)), np.eye(2), np.ones((2, 1)), effort=_Strange())
    with pytest.raises(UnsupportedEffortError, match="'_Strange'"):
        export_modelica(strange, tmp_path / "a.mo")
    assert not list(tmp_path.glob("*.mo"))  # nothing half-written


def _check_ported_equations(sur, text, extra=None, inputs=None):
    """Balanced, everything used, every residual zero for values from the ph objects (and
    ``extra(ue)``: values of further unknowns at the external inputs ``ue``, random unless
    ``inputs`` are given).  ``der(x)`` is random (the state equation's residual is then its
    difference from the flow), the flow itself when the outputs read it (``Cdx``)."""
    cls = mc.model(text)
    system, p = sur.system, sur.ports
    r = _rng(12)
    n = system.n_states
    x, ue, d = r.normal(size=n), r.normal(size=sur.n_inputs), r.normal(size=n)
    ue = ue if inputs is None else np.asarray(inputs, dtype=float)
    u = sur.inputs_to_ports(ue)
    if p.reads_rate:
        d = system.flow(x, u)
    z = system.effort(x)
    y = system.output_from_effort(z, u)
    ins = _port_names(cls, "RealInput")
    outs = [nm for nm in _port_names(cls, "RealOutput")
            if nm not in ("H", "energy_residual", "P_supplied", "P_dissipated")]
    assert (ins, outs) == (list(p.input_names), list(p.output_names))
    H = float(system.hamiltonian(x))
    vals = {"x": x, "z": z, "u": u, "y_ph": y, "P_supplied": float(y @ u),
            "P_dissipated": float(system.dissipation_rate(z, u)), "H": H, "H_start": 0.4,
            "E_supplied": 0.7, "E_dissipated": 0.2, "energy_residual": H - 0.4 - 0.7 + 0.2,
            **dict(zip(ins, ue)), **dict(zip(outs, sur.outputs(x, ue))),
            **(extra(ue) if extra else {})}
    der = {"x": d, "E_supplied": vals["P_supplied"], "E_dissipated": vals["P_dissipated"]}
    res = mc.residuals(cls, vals, der)
    assert sum(v.size for _, v in res) == sum(mc.unknowns(cls).values())
    assert set(mc.unknowns(cls)) == set(vals) - {"H_start", *ins}
    scale = max(1.0, float(np.abs(system.flow(x, u)).max()))
    for eq, v in res:
        expected = d - system.flow(x, u) if "der ( x )" in eq else 0.0
        assert np.abs(v - expected).max() < RTOL * scale, eq
    assert set(cls.components) <= mc.used_names(cls)
    return cls


def test_feedthrough_model_equations_hold():
    from fmu_surrogate.ph import PortedSystem, PortMap
    from tests.export.fmi.test_fmu_export_feedthrough import _feedthrough_ph

    system = _feedthrough_ph()
    text = modelica_model(system, "Ft")
    assert "  der(x) = (J - R)*z + (B - P)*u;" in text
    assert "  {y1, y2} = transpose(B + P)*z + (S - N)*u;" in text
    # the same system behind the identity wiring: every equation checked numerically
    sur = PortedSystem(system, PortMap.identity(2, ["u1", "u2"], ["y1", "y2"]))
    cls = _check_ported_equations(sur, modelica_model(sur, "Ft"))
    assert np.array_equal(mc.Evaluator(cls).params["N"], system.N)


def test_ported_system_model_is_balanced_and_its_equations_hold():
    from tests.export.test_wiring import X0, ported

    sur = ported()
    text = modelica_model(sur, "DropIn")
    cls = _check_ported_equations(sur, text)
    ev = mc.Evaluator(cls)
    p = sur.ports
    for key, ref in (("Tu", p.Tu), ("cu", p.cu), ("Ty", p.Ty), ("Cx", p.Cx), ("Du", p.Du),
                     ("cy", p.cy), ("x_start", X0)):
        assert np.array_equal(ev.params[key], ref), key  # exact literals
    assert 'RealInput F(unit = "N")' in text and 'RealOutput q(unit = "m")' in text
    assert "  {v, q, i3} = Ty*y_ph + Cx*x + Du*{F, u3} + cy;" in text
    assert "  u = Tu*{F, u3} + cu;" in text


def test_delayed_feedthrough_exports_the_continuous_time_model():
    """A delayed feedthrough is a trait of sampled co-simulation outputs: the Modelica model of
    such a surrogate is that of the same surrogate without the delay, its direct feedthrough
    ``Du*{F, u3}`` included."""
    from tests.export.test_wiring import ported

    sur = ported()
    delayed = PortedSystem(sur.system, sur.ports, sur.x0, delayed_feedthrough=True,
                           inputs_before=np.ones(sur.n_inputs))
    text = modelica_model(delayed, "DropIn")
    assert text == modelica_model(sur, "DropIn")
    assert "  {v, q, i3} = Ty*y_ph + Cx*x + Du*{F, u3} + cy;" in text


def test_late_outputs_export_the_continuous_time_model():
    """Late outputs (those read at a communication point are those of the point before) are a
    trait of sampled co-simulation outputs too: the Modelica model is that of the same surrogate
    with outputs of the current state and inputs."""
    from tests.export.test_wiring import ported

    sur = ported()
    late = PortedSystem(sur.system, sur.ports, sur.x0, late_outputs=True)
    assert modelica_model(late, "DropIn") == modelica_model(sur, "DropIn")


def test_nonlinear_ph_drop_in_equations_and_dissipation_functions_hold():
    """A NonlinearPH with feedthrough behind an FMU's names: every equation holds for values of
    the ph objects (its flow and dissipation rate carry R_nl(z)), and the dissipation functions
    evaluate to the PowerDissipation's force and rate."""
    from tests.export.fmi.test_fmu_export_nonlinear_ph import ported

    sur = ported()
    text = modelica_model(sur, "NonlinearDropIn")
    assert "  der(x) = (J - R)*z - dissipationForce(z, diss_directions, diss_smoothing, " \
           "diss_gains, diss_exponents) + (B - P)*u;" in text
    assert "log(1 + exp(" in text and "tanh(" in text  # the logcosh ridge, as Modelica has it
    cls = _check_ported_equations(sur, text)
    ev = mc.Evaluator(cls)
    d = sur.system.dissipation
    for key, ref in (("diss_directions", d.directions), ("diss_gains", d.gains),
                     ("diss_exponents", d.exponents), ("diss_smoothing", d.smoothing)):
        assert np.array_equal(ev.params[key], ref), key
    args = [ev.params[c.name] for c in cls.classes["dissipationForce"].components.values()
            if c.prefix == "input" and c.name != "x"]
    for z in 2.0 * _rng(13).normal(size=(4, 3)):
        f = ev.call("dissipationForce", [z, *args], {})
        assert np.abs(f - d.force(z[None])[0]).max() < RTOL * np.abs(f).max()
        p = ev.call("dissipationRate", [z, *args], {})
        assert abs(p - d.rate(z[None])[0]) < RTOL * abs(p)


def test_nonlinear_feedthrough_equations_and_functions_hold():
    """A NonlinearPH with a nonlinear feedthrough S_nl(u): the outputs add
    portDissipationForce(u) and the dissipated power portDissipationRate(u); every equation holds
    for values of the ph objects and the two functions evaluate to the law's force and rate.  A
    static law (order 0) is refused as the linear static map is."""
    from tests.export.fmi.test_fmu_export_port_law import ported, static_law

    sur = ported()
    text = modelica_model(sur, "PortLaw")
    call = "portDissipationForce(u, port_diss_directions, port_diss_smoothing, " \
           "port_diss_asymmetry, port_diss_gains, port_diss_exponents)"  # one term asymmetric
    assert f"  y_ph = transpose(B + P)*z + (S - N)*u + {call};" in text
    assert "+ portDissipationRate(u, port_diss_directions" in text
    cls = _check_ported_equations(sur, text)
    ev = mc.Evaluator(cls)
    law = sur.system.port_dissipation
    for key, ref in (("directions", law.directions), ("gains", law.gains),
                     ("exponents", law.exponents), ("smoothing", law.smoothing),
                     ("asymmetry", law.asymmetry)):
        assert np.array_equal(ev.params[f"port_diss_{key}"], ref), key  # exact literals
    args = [ev.params[c.name] for c in cls.classes["portDissipationForce"].components.values()
            if c.prefix == "input" and c.name != "x"]
    for u in 2.0 * _rng(14).normal(size=(4, 2)):
        f = ev.call("portDissipationForce", [u, *args], {})
        assert np.abs(f - law.force(u[None])[0]).max() < RTOL * np.abs(f).max()
        p = ev.call("portDissipationRate", [u, *args], {})
        assert abs(p - law.rate(u[None])[0]) < RTOL * abs(p)
    with pytest.raises(ExportError, match="order-0 surrogate"):
        modelica_model(static_law(), "Static")
