"""The expression source of the exporters: its numpy and C renderings equal the ph objects."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from fmu_surrogate.export.expressions.effort import (
    ExportError,
    UnsupportedEffortError,
    effort_expressions,
)
from fmu_surrogate.export.expressions.render import effort_c_source
from fmu_surrogate.ph import (
    PHDAE,
    CompositeEffort,
    ConvexEffort,
    KernelEffort,
    LinearEffort,
    LinearPH,
    PartlyKnownEffort,
    PolynomialEffort,
    TermEffort,
    interconnect,
)

# measured (max-norm relative error over 100 random points per effort, |x| up to ~5): numpy
# rendering vs the ph objects 3.4e-15, C rendering (gcc -O0) 3.3e-15 — the summation order and
# the kernel's distance formula differ from numpy's; the bound leaves a factor 30
RTOL = 1e-13


def _rng(seed):
    return np.random.default_rng(seed)


def kernel(seed=0, N=7, n=3, h=False, constraint=False, K=2):
    """A kernel effort; with ``h``: n = 5, differential = (0, 2, 3) and K components."""
    r = _rng(seed)
    n = 5 if h else n
    X, W, ls, c = r.normal(size=(N, n)), r.normal(size=(N, n)), r.uniform(0.5, 2, n), r.normal(
        size=n)
    if not h:
        return KernelEffort(X, W, ls, c)
    d = np.array([0, 2, 3])
    W[:, d], c[d] = 0.0, 0.0
    kw = {"differential": d, "h_weights": r.normal(size=(K, N, 3)),
          "h_lengthscale": r.uniform(0.5, 2.0, (K, 3)), "effort_map": r.normal(size=(3, 3)),
          "h_linear": r.normal(size=3), "h_offset": 0.7}
    if constraint:
        kw.update(c_weights=r.normal(size=(N, 3)), c_lengthscale=r.uniform(0.5, 2.0, 3),
                  c_anchor=r.normal(size=(N, 2)), c_shift=r.normal(size=2))
    return KernelEffort(X, W, ls, c, **kw)


def linear(seed=1, n=4, singular=True):
    r = _rng(seed)
    A = r.normal(size=(n, n))
    E = np.diag([1.0, 2.0] + [0.0] * (n - 2)) if singular else np.eye(n)
    return LinearEffort(A @ A.T + n * np.eye(n), E)


def composite():
    lin, kh = linear(), kernel(h=True, constraint=True)
    return CompositeEffort([lin, kh, kernel(seed=4)], [4, 5, 3],
                           [lin.hamiltonian, kh.hamiltonian, None])


def composite_with_h():
    lin, kh = linear(), kernel(h=True, K=1)
    return CompositeEffort([lin, kh], [4, 5], [lin.hamiltonian, kh.hamiltonian])


def terms(seed=7, N=25):
    """A discovered law's effort: every term kind, a gaussian discrepancy of N centres."""
    r = _rng(seed)
    k = [{"kind": "power", "exponent": 0, "coef": 0.3},
         {"kind": "power", "exponent": 1, "coef": 10.0},
         {"kind": "power", "exponent": 3, "coef": -2.5},
         {"kind": "sin", "coef": 1.2}, {"kind": "cos", "coef": -0.4},
         {"kind": "gaussian", "centers": r.uniform(-2, 2, N), "weights": r.normal(size=N),
          "length_scale": 0.6}]
    return TermEffort([k, [{"kind": "power", "exponent": 1, "coef": 1 / 1.7}],
                       [{"kind": "power", "exponent": 2, "coef": 0.9},
                        {"kind": "gaussian", "centers": [], "weights": [], "length_scale": 1.0}]])


def polynomial(n=5):
    """Known parts: identities, a constraint row l² − q1² − q2², a force −2 q λ, a cubic
    (n = 5), or the identity on x2 (n = 2)."""
    if n == 2:
        return PolynomialEffort.from_terms(2, {1: "identity"})
    return PolynomialEffort.from_terms(n, {1: "identity",
                                           4: [(1.0, {}), (-1.0, {0: 2}), (-1.0, {1: 2})],
                                           2: [(-2.0, {0: 1, 4: 1}), (0.7, {2: 3, 3: 1})],
                                           3: [(-2.0, {1: 1, 4: 1})]})


def partly_known():
    """A GP effort with a Hamiltonian on (0, 2, 3) plus the known polynomial parts."""
    return PartlyKnownEffort(kernel(h=True, constraint=True), polynomial())


def composite_with_terms():
    te, lin = terms(), linear(n=2, singular=False)
    return CompositeEffort([te, lin], [3, 2], [te.hamiltonian, lin.hamiltonian])


def convex(seed=8, n=3):
    """A NonlinearPH's energy: Q ≻ 0, two quartic (hardening) and one logcosh ridge."""
    r = _rng(seed)
    A = r.normal(size=(n, n))
    return ConvexEffort(A @ A.T + np.eye(n), ["quartic", "logcosh", "quartic"], [0.5, 2.0, 0.1],
                        r.normal(size=(3, n)))


def convex_periodic(seed=9, n=3):
    """A turning part's energy: a periodic ridge taking the whole form along its direction
    (``α wᵀQ⁻¹w = 1``), a quartic and a logcosh ridge; directions of spread 2 (several turns
    over the test states)."""
    r = _rng(seed)
    A = r.normal(size=(n, n))
    Q = A @ A.T + np.eye(n)
    w = 2.0 * r.normal(size=(3, n))
    return ConvexEffort(Q, ["periodic", "quartic", "logcosh"],
                        [1.0 / (w[0] @ np.linalg.solve(Q, w[0])), 0.5, 2.0], w)


def convex_preloaded(seed=8, n=3):
    """:func:`convex` with its ridges preloaded: shifts −0.8, 0.4 and 0 (a part at rest under
    a static load)."""
    e = convex(seed, n)
    return ConvexEffort(e.Q, e.kinds, e.weights, e.directions, [-0.8, 0.4, 0.0])


def convex_gap(seed=8, n=3):
    """End stops and a contact: :func:`convex` with two of its ridges gaps, one centred on rest
    and one preloaded beyond its stop (``|c| > 1``: rest in contact), directions of spread 2
    (the test states reach both sides of every stop)."""
    e = convex(seed, n)
    return ConvexEffort(e.Q, ["gap", "quartic", "gap"], e.weights, 2.0 * e.directions,
                        [0.0, 0.4, -1.3])


EFFORTS = {
    "convex": convex,
    "convex_gap": convex_gap,
    "convex_preloaded": convex_preloaded,
    "convex_periodic": convex_periodic,
    "convex_quadratic": lambda: ConvexEffort(np.diag([1.0, 3.0])),
    "terms": terms,
    "linear": linear,
    "kernel": kernel,
    "kernel_h": lambda: kernel(h=True),
    "kernel_h_constraint": lambda: kernel(h=True, constraint=True),
    "composite": composite,
    "composite_h": composite_with_h,
    "composite_terms": composite_with_terms,
    "polynomial": polynomial,
    "partly_known": partly_known,
    "partly_known_no_h": lambda: PartlyKnownEffort(kernel(n=5), polynomial()),
}


def _n(effort):
    return effort_expressions(effort).n


def _has_h(name):
    return name not in ("kernel", "composite", "polynomial", "partly_known_no_h")


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("name", sorted(EFFORTS))
def test_numpy_rendering_equals_the_effort(name):
    eff = EFFORTS[name]()
    ex = effort_expressions(eff)
    x = _rng(11).normal(size=(5, ex.n))
    assert _rel(ex.evaluate("z", x), eff(x)) < RTOL
    assert _rel(ex.evaluate("dz", x), eff.jacobian(x)) < RTOL
    assert ex.evaluate("z", x[0]).shape == (ex.n,)
    assert (ex.H is not None) == _has_h(name)
    if ex.H is not None:
        assert _rel(ex.evaluate("H", x), eff.hamiltonian(x)) < RTOL
        assert ex.evaluate("H", x[0]).shape == ()


def test_systems_give_their_effort_and_hamiltonian():
    r = _rng(2)
    A = r.normal(size=(3, 3))
    lin = LinearPH(A - A.T, np.diag([0.1, 0.0, 0.3]), np.diag([1.0, 2.0, 3.0]), np.ones((3, 1)))
    ke = kernel(h=True)
    dae = PHDAE(np.eye(5), np.zeros((5, 5)), np.eye(5), np.ones((5, 1)), effort=ke,
                hamiltonian=ke.hamiltonian)
    both = interconnect([lin, dae], [[0.0, 1.0], [-1.0, 0.0]], [[0], [0]])
    for s in (lin, dae, both):
        ex = effort_expressions(s)
        x = r.normal(size=(4, s.n_states))
        assert _rel(ex.evaluate("z", x), s.effort(x)) < RTOL
        assert _rel(ex.evaluate("dz", x), s.effort_jacobian(x)) < RTOL
        assert _rel(ex.evaluate("H", x), s.hamiltonian(x)) < RTOL
    no_h = PHDAE(np.eye(5), np.zeros((5, 5)), np.eye(5), np.ones((5, 1)), effort=ke)
    assert effort_expressions(no_h).H is None  # the system has none, though the effort has


def _compile(sources: dict[str, str], tmp_path):
    """One shared library from several efforts (prefix -> source) with exported wrappers."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed (gcc)"
    text = "\n".join(sources.values())
    for p in sources:
        text += (f"\nvoid {p}_api_z(const double *x, double *z) {{ {p}_z(x, z); }}\n"
                 f"void {p}_api_dz(const double *x, double *dz) {{ {p}_dz(x, dz); }}\n"
                 f"double {p}_api_H(const double *x) {{ return {p}_H(x); }}\n"
                 f"int {p}_api_has_h(void) {{ return {p}_HAS_H; }}\n"
                 f"int {p}_api_n(void) {{ return {p}_N; }}\n")
    src = tmp_path / "efforts.c"
    src.write_text(text)
    lib = tmp_path / "libefforts.so"
    proc = subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O0",
                           "-shared", "-fPIC", "-o", str(lib), str(src), "-lm"],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return ctypes.CDLL(str(lib))


def _call(lib, p, x):
    P = ctypes.POINTER(ctypes.c_double)
    getattr(lib, f"{p}_api_H").restype = ctypes.c_double
    n = getattr(lib, f"{p}_api_n")()
    z, dz, H = np.zeros((len(x), n)), np.zeros((len(x), n * n)), np.zeros(len(x))
    for m, xm in enumerate(np.ascontiguousarray(x)):
        getattr(lib, f"{p}_api_z")(xm.ctypes.data_as(P), z[m].ctypes.data_as(P))
        getattr(lib, f"{p}_api_dz")(xm.ctypes.data_as(P), dz[m].ctypes.data_as(P))
        H[m] = getattr(lib, f"{p}_api_H")(xm.ctypes.data_as(P))
    return z, dz.reshape(len(x), n, n), H, bool(getattr(lib, f"{p}_api_has_h")())


def test_c_rendering_compiles_and_equals_the_effort(tmp_path):
    efforts = {name: make() for name, make in EFFORTS.items()}
    efforts["gp"] = kernel(seed=5, N=400, n=3)  # a GP-sized expansion
    lib = _compile({name: effort_c_source(e, prefix=name) for name, e in efforts.items()},
                   tmp_path)
    for name, eff in efforts.items():
        x = _rng(12).normal(size=(4, _n(eff)))
        z, dz, H, has_h = _call(lib, name, x)
        assert _rel(z, eff(x)) < RTOL, name
        assert _rel(dz, eff.jacobian(x)) < RTOL, name
        assert has_h == (effort_expressions(eff).H is not None)
        if has_h:
            assert _rel(H, eff.hamiltonian(x)) < RTOL, name
        else:
            assert np.all(np.isnan(H))


def _function_bodies(src):
    return re.findall(r"static \w+ \w+\(const double \*x[^)]*\)\n\{\n(.*?)\n\}", src, re.DOTALL)


def test_c_loops_over_embedded_arrays_instead_of_unrolling():
    small = effort_c_source(kernel(seed=5, N=10, n=3))
    big = effort_c_source(kernel(seed=5, N=500, n=3))
    # the functions are the same apart from the loop bound; only the data grows
    assert [b.replace("500", "10") for b in _function_bodies(big)] == _function_bodies(small)
    assert "for (int i = 0; i < 500; ++i)" in big
    assert "static const double eff_centres[1500]" in big


def test_gaussian_terms_are_loops_over_their_centres():
    small, big = effort_c_source(terms(N=10)), effort_c_source(terms(N=300))
    assert [b.replace("300", "10") for b in _function_bodies(big)] == _function_bodies(small)
    # one loop each in z, dz and H; H integrates the kernels with erf
    assert big.count("for (int i = 0; i < 300; ++i)") == 3 and "erf(" in big
    assert "static const double eff_x1_t6_centres[300]" in big


def test_c_arrays_round_trip_exactly():
    eff = kernel(seed=6, N=30, n=3, h=False)
    eff.X[0, 0] = 0.1 + 0.2  # 0.30000000000000004: needs all 17 digits
    eff.weights[1, 1] = 1e-300
    eff.weights[2, 2] = -123456789.12345679
    src = effort_c_source(eff)
    for name, arr in (("centres", eff.X), ("weights", eff.weights)):
        body = re.search(rf"eff_{name}\[\d+\] = \{{(.*?)\}};", src, re.DOTALL).group(1)
        vals = np.array([float(v) for v in body.replace("\n", "").split(",")])
        assert np.array_equal(vals, arr.reshape(-1))


def test_c_source_defines_the_interface():
    src = effort_c_source(linear(n=3), prefix="my_eff")
    assert src.count("#include") == 1 and "#include <math.h>" in src
    for decl in ("#define my_eff_N 3", "#define my_eff_HAS_H 1",
                 "static inline void my_eff_z(const double *x, double *z)",
                 "static inline void my_eff_dz(const double *x, double *dz)",
                 "static double my_eff_H(const double *x)"):
        assert decl in src
    assert "#define eff_HAS_H 0" in effort_c_source(kernel())


class _Strange:
    def __call__(self, x):
        return x


def test_unknown_effort_kinds_are_named():
    with pytest.raises(UnsupportedEffortError, match="'_Strange'"):
        effort_expressions(_Strange())
    sys_ = PHDAE(np.eye(2), np.zeros((2, 2)), np.eye(2), np.ones((2, 1)), effort=_Strange())
    with pytest.raises(UnsupportedEffortError, match="'_Strange'.*LinearEffort, KernelEffort"):
        effort_c_source(sys_)
    inner = CompositeEffort([linear(n=2), _Strange()], [2, 2], [None, None])
    with pytest.raises(UnsupportedEffortError, match="'_Strange'"):
        effort_expressions(inner)
    with pytest.raises(TypeError):  # also the builtin it is
        effort_expressions(_Strange())
    with pytest.raises(UnsupportedEffortError, match="'_Strange'"):  # a learned part
        effort_expressions(PartlyKnownEffort(_Strange(), polynomial(2)))


def test_bad_input_gives_clear_errors():
    eff = kernel()
    eff.weights[2, 1] = np.nan  # damaged after construction
    with pytest.raises(ExportError, match=r"kernel weights \(weights\) contains NaN"):
        effort_expressions(eff)
    empty = kernel()
    empty.X, empty.weights = np.zeros((0, 3)), np.zeros((0, 3))
    with pytest.raises(ExportError, match="kernel expansion is empty"):
        effort_c_source(empty)
    with pytest.raises(ExportError, match="not a C identifier"):
        effort_c_source(linear(), prefix="2eff")
    lam = PHDAE(np.eye(3), np.zeros((3, 3)), np.eye(3), np.ones((3, 1)), effort=kernel(),
                hamiltonian=lambda x: np.zeros(len(x)))
    with pytest.raises(ExportError, match="Hamiltonian is a Python function"):
        effort_expressions(lam)


def _one_gap(shift):
    """``H = x² + 3·ψ(2x + c)``: one state, one gap ridge; the stops at ``2x + c = ±1`` are
    binary fractions for ``c = 0`` and ``0.25``."""
    return ConvexEffort([[2.0]], ["gap"], [3.0], [[2.0]], [shift])


def test_a_gap_ridge_renders_bit_for_bit(tmp_path):
    """The gap's clip as ``fmin(fmax(s, −1), 1)`` and its step as a ``?:`` (no new rounding):
    the numpy evaluation of the program and the compiled C equal ``ConvexEffort``'s ``z``,
    ``∂z/∂x`` and ``H`` exactly (one ridge, one state: the same operations in the same order),
    at the stops, on both sides of them and within the gap."""
    x = np.concatenate([np.linspace(-3.0, 3.0, 601), [-0.625, -0.5, 0.375, 0.5]])[:, None]
    x = np.concatenate([x, np.nextafter(x, 10.0), np.nextafter(x, -10.0)])
    efforts = {f"gap{k}": _one_gap(c) for k, c in enumerate((0.0, 0.25))}
    for eff in efforts.values():
        s = 2.0 * x[:, 0] + eff.shifts[0]
        assert np.any(np.abs(s) == 1.0) and np.any(np.abs(s) < 1.0) and np.any(np.abs(s) > 1.0)
        ex = effort_expressions(eff)
        assert np.array_equal(ex.evaluate("z", x), eff(x))
        assert np.array_equal(ex.evaluate("dz", x), eff.jacobian(x))
        assert np.array_equal(ex.evaluate("H", x), eff.hamiltonian(x))
    src = {name: effort_c_source(e, prefix=name) for name, e in efforts.items()}
    assert "fmin(fmax(t1, -1.0), 1.0)" in src["gap0"]
    assert "(fabs(t1) > 1.0 ? 1.0 : 0.0)" in src["gap0"]
    lib = _compile(src, tmp_path)
    for name, eff in efforts.items():
        z, dz, H, has_h = _call(lib, name, x)
        assert has_h and np.array_equal(z, eff(x)) and np.array_equal(H, eff.hamiltonian(x))
        assert np.array_equal(dz, eff.jacobian(x))
