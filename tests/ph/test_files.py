"""Surrogate files: exact round trips for every kind, and damaged files refused by field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from fmu_surrogate.ph import (
    PHDAE,
    KernelEffort,
    LinearPH,
    PolynomialEffort,
    PortedSystem,
    PortMap,
    StructureError,
    SurrogateFileError,
    interconnect,
    load,
    save,
    simulate,
)
from fmu_surrogate.ph.files import VERSION, _digest


def linear(rng, n=4, m=2):
    A = rng.normal(size=(n, n))
    Y = rng.normal(size=(n, 2))
    Z = rng.normal(size=(n, n))
    return LinearPH(A - A.T, Y @ Y.T, Z @ Z.T + np.eye(n), rng.normal(size=(n, m)),
                    input_names=[f"F{i + 1}" for i in range(m)],
                    output_names=[f"v{i + 1}" for i in range(m)])


def kernel(rng, n=3, N=7, hamiltonian=False):
    kw = {}
    if hamiltonian:
        kw = {"differential": [0], "h_weights": rng.normal(size=(2, N, 1)),
              "h_lengthscale": [[0.7], [2.0]], "effort_map": [[1.0]], "h_linear": [0.3],
              "h_offset": 0.1}
    W, c = rng.normal(size=(N, n)), rng.normal(size=n)
    if hamiltonian:  # the differential component comes from ∇H̄ only
        W[:, 0], c[0] = 0.0, 0.0
    eff = KernelEffort(rng.normal(size=(N, n)), W, [0.5, 1.5, 2.5], c, **kw)
    return PHDAE(np.diag([1.0, 0, 0]), [[0, 0, 0], [0, 0, 1], [0, -1, 0]],
                 [[1, -1, 0], [-1, 1, 0], [0, 0, 0]], [[0.0], [0.0], [1.0]], effort=eff,
                 hamiltonian=eff.hamiltonian if hamiltonian else None,
                 state_names=["x1", "x2", "x3"], input_names=["u"])


def same(a, b):
    assert type(a) is type(b)
    for k in ("E", "J", "R", "B", "P", "S", "N") + (("Q",) if isinstance(a, LinearPH) else ()):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k  # bitwise
    assert (a.input_names, a.output_names, a.state_names) == \
        (b.input_names, b.output_names, b.state_names)
    x = np.random.default_rng(9).normal(size=(5, a.n_states))
    assert np.array_equal(a.effort(x), b.effort(x))
    if a.has_hamiltonian:
        assert np.array_equal(a.hamiltonian(x), b.hamiltonian(x))


@pytest.mark.parametrize("make", ["linear", "kernel", "kernel_h", "coupled_linear",
                                  "coupled_nonlinear"])
def test_round_trip_is_exact_for_every_kind(tmp_path, make):
    rng = np.random.default_rng(1)
    system = {
        "linear": lambda: linear(rng),
        "kernel": lambda: kernel(rng),
        "kernel_h": lambda: kernel(rng, hamiltonian=True),
        "coupled_linear": lambda: interconnect([linear(rng), linear(rng)],
                                               [[0, 2.0], [-2.0, 0]], [[0], [1]]),
        "coupled_nonlinear": lambda: interconnect([linear(rng, 3, 1), kernel(rng)],
                                                  [[0, 1.0], [-1.0, 0]], [[0], [0]]),
    }[make]()
    prov = {"source_fmu": {"name": "m", "guid": "{g}", "sha256": "ab" * 32},
            "dataset": {"file": "d.nc", "sha256": "cd" * 32}, "method": "test",
            "settings": {"max_iter": 3}}
    save(system, tmp_path / "s.json", provenance=prov)
    back = load(tmp_path / "s.json")
    same(system, back)
    assert back.provenance["method"] == "test" and back.provenance["package_version"]


def edit(path, fn):
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


DAMAGE = {
    "truncated": (lambda p: p.write_text(p.read_text()[:200]), "not valid JSON"),
    "not ours": (lambda p: edit(p, lambda d: d.update(format="other")), "field 'format'"),
    "newer version": (lambda p: edit(p, lambda d: d.update(version=VERSION + 1)),
                      f"field 'version' is {VERSION + 1}, newer"),
    "version not a number": (lambda p: edit(p, lambda d: d.update(version="2")),
                             "field 'version' is invalid"),
    "missing field": (lambda p: edit(p, lambda d: d["system"].pop("J")), "field 'system'"),
    "wrong type": (lambda p: edit(p, lambda d: d["names"].update(inputs="F1")),
                   "field 'names.inputs'"),
    "hand-edited value": (lambda p: edit(p, lambda d: d["system"]["B"][0].__setitem__(0, 9.0)),
                          "field 'system' does not match its checksum"),
    "NaN": (lambda p: p.write_text(re.sub(r'("B": \[\s*\[\s*)[-0-9.e]+', r"\1NaN", p.read_text(),
                                          count=1)), "NaN"),
    "corrupted bytes": (lambda p: p.write_bytes(p.read_bytes()[:50] + b"\xff\xfe" +
                                                p.read_bytes()[52:]), "damaged|not valid JSON"),
    "unknown kind": (lambda p: edit(p, lambda d: d.update(kind="Other")), "field 'kind'"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_files_are_refused_with_the_field_named(tmp_path, damage):
    path = tmp_path / "s.json"
    save(linear(np.random.default_rng(2)), path)
    how, match = DAMAGE[damage]
    how(path)
    with pytest.raises(SurrogateFileError, match=match):
        load(path)


def test_edited_structure_with_matching_checksum_is_still_refused(tmp_path):
    """Even a consistent edit (checksum recomputed) cannot make J non-skew."""
    from fmu_surrogate.ph.files import _digest

    path = tmp_path / "s.json"
    save(linear(np.random.default_rng(2)), path)

    def make_symmetric(d):
        d["system"]["J"][0][1] = d["system"]["J"][1][0] = 1.0
        d["checksums"]["system"] = _digest(d["system"])

    edit(path, make_symmetric)
    with pytest.raises(StructureError, match="J"):
        load(path)


def test_effort_without_codec_cannot_be_saved(tmp_path):
    s = PHDAE(np.eye(1), [[0.0]], [[1.0]], [[1.0]], effort=lambda x: 2 * x)
    with pytest.raises(SurrogateFileError, match="registered codec"):
        save(s, tmp_path / "s.json")


# -- version 2: feedthrough, order 0, drop-in surrogates; version-1 files ------------------------

DATA = Path(__file__).parent / "data"


def feedthrough(rng, n=3, m=2):
    L = rng.normal(size=(n + m, n + m))
    W = L @ L.T
    A, Mn, Z = rng.normal(size=(n, n)), rng.normal(size=(m, m)), rng.normal(size=(n, n))
    return LinearPH(A - A.T, W[:n, :n], Z @ Z.T + np.eye(n), rng.normal(size=(n, m)),
                    P=W[:n, n:], S=W[n:, n:], N=Mn - Mn.T, state_names=["q", "p", "T"])


def ported(rng):
    core = feedthrough(rng)
    ports = PortMap(("F", "i", "level"), ("v", "pos"), ("N", "A", None), ("m/s", "m"),
                    Tu=[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.5]], cu=[0.0, 0.1 + 0.2],
                    Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=rng.normal(size=(2, 3)),
                    Du=rng.normal(size=(2, 3)), cy=[1 / 3, -2e-17])
    return PortedSystem(core, ports, x0=rng.normal(size=3))


@pytest.mark.parametrize("make", ["feedthrough", "order_zero", "nonlinear_feedthrough",
                                  "coupled_feedthrough"])
def test_round_trip_with_feedthrough_is_exact(tmp_path, make):
    rng = np.random.default_rng(3)
    system = {
        "feedthrough": lambda: feedthrough(rng),
        "order_zero": lambda: LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)),
                                       np.zeros((0, 2)), S=np.diag([0.1, 1 / 3]),
                                       N=[[0.0, 0.7], [-0.7, 0.0]]),
        "nonlinear_feedthrough": lambda: PHDAE(np.eye(2), [[0.0, 1.0], [-1.0, 0.0]],
                                               np.diag([0.0, 0.2]), [[0.0], [1.0]],
                                               effort=PolynomialEffort.from_terms(
                                                   2, {0: [(2.0, {0: 1}), (0.5, {0: 3})],
                                                       1: [(1.0, {1: 1})]}),
                                               P=[[0.0], [0.1]], S=[[0.3]]),
        "coupled_feedthrough": lambda: interconnect([feedthrough(rng), feedthrough(rng)],
                                                    [[0, 1.5], [-1.5, 0]], [[0], [1]]),
    }[make]()
    save(system, tmp_path / "s.json")
    back = load(tmp_path / "s.json")
    same(system, back)
    assert json.loads((tmp_path / "s.json").read_text())["version"] == 2


def test_round_trip_of_a_drop_in_surrogate_is_exact(tmp_path):
    sur = ported(np.random.default_rng(4))
    save(sur, tmp_path / "s.json", units={"inputs": ["N", "A"]})
    back = load(tmp_path / "s.json")
    assert isinstance(back, PortedSystem)
    same(sur.system, back.system)
    assert back.ports == sur.ports  # every array bit for bit, names and units
    assert np.array_equal(back.x0, sur.x0)
    assert back.input_units == ("N", "A", None) and back.units == {"inputs": ["N", "A"]}
    x, u = np.random.default_rng(5).normal(size=(4, 3)), np.random.default_rng(6).normal(
        size=(4, 3))
    assert np.array_equal(back.outputs(x, u), sur.outputs(x, u))


@pytest.mark.parametrize("before", [None, [0.5, -1.0, 2.0]])
def test_a_delayed_feedthrough_is_saved_in_version_3(tmp_path, before):
    base = ported(np.random.default_rng(4))
    sur = PortedSystem(base.system, base.ports, base.x0, delayed_feedthrough=True,
                       inputs_before=before)
    save(sur, tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["version"] == 3 and doc["delayed_feedthrough"] == {"inputs_before": before}
    back = load(tmp_path / "s.json")
    assert back.delayed_feedthrough and back.ports == sur.ports
    assert (back.inputs_before is None if before is None
            else np.array_equal(back.inputs_before, before))
    # without the delay: version 2, which readers of version 2 read
    save(base, tmp_path / "b.json")
    assert json.loads((tmp_path / "b.json").read_text())["version"] == 2
    assert not load(tmp_path / "b.json").delayed_feedthrough
    # an edited delay is refused by its checksum
    edit(tmp_path / "s.json", lambda d: d.__setitem__("delayed_feedthrough",
                                                      {"inputs_before": [0.0, 0.0, 0.0]}))
    with pytest.raises(SurrogateFileError, match="'delayed_feedthrough' does not match"):
        load(tmp_path / "s.json")


PORTED_DAMAGE = {
    "ports edited": (lambda d: d["ports"]["cu"].__setitem__(0, 1.0),
                     "field 'ports' does not match its checksum"),
    "x0 without ports": (lambda d: d.pop("ports"), "field '\\(document\\)' is invalid: 'ports'"),
    "ports of another system": (lambda d: (d["ports"]["Tu"].append([0.0, 0.0, 0.0]),
                                           d["checksums"].update(ports=_digest(d["ports"]))),
                                "PortMap"),
}


@pytest.mark.parametrize("damage", sorted(PORTED_DAMAGE))
def test_damaged_drop_in_files_are_refused(tmp_path, damage):
    path = tmp_path / "s.json"
    save(ported(np.random.default_rng(7)), path)
    how, match = PORTED_DAMAGE[damage]
    edit(path, how)
    with pytest.raises((SurrogateFileError, StructureError), match=match):
        load(path)


def test_version_1_files_load_as_before(tmp_path):
    """Files written by version 1 (committed under tests/ph/data) read back identically."""
    lin_ = load(DATA / "surrogate-1-linear.json")
    ref_lin = LinearPH([[0.0, 1.5], [-1.5, 0.0]], [[0.0, 0.0], [0.0, 0.25]],
                       [[2.0, 0.5], [0.5, 1.0]], [[0.0], [1.0]], input_names=["force"],
                       output_names=["velocity"], state_names=["q", "p"])
    same(ref_lin, lin_)
    assert not lin_.has_feedthrough
    assert lin_.units == {"inputs": ["N"], "outputs": ["m/s"]}
    assert lin_.provenance["method"] == "hand-written v1 reference"
    poly = load(DATA / "surrogate-1-polynomial.json")
    eff = PolynomialEffort.from_terms(2, {0: [(2.0, {0: 1}), (0.5, {0: 3})], 1: [(1.0, {1: 1})]})
    ref = PHDAE(np.eye(2), [[0.0, 1.0], [-1.0, 0.0]], [[0.0, 0.0], [0.0, 0.125]],
                [[0.0], [1.0]], effort=eff)
    same(ref, poly)
    assert not poly.has_hamiltonian
    # saved again, it becomes a version-2 file with the same content
    save(lin_, tmp_path / "v2.json")
    assert json.loads((tmp_path / "v2.json").read_text())["version"] == 2
    same(ref_lin, load(tmp_path / "v2.json"))


def test_a_static_law_and_late_outputs_are_saved_in_version_4(tmp_path):
    from fmu_surrogate.ph import StaticLaw

    base = ported(np.random.default_rng(4))
    p = base.ports
    k_in, k_out = len(p.input_names), len(p.output_names)
    law = StaticLaw(("cubic", "hinge"), W=np.arange(2.0 * k_in).reshape(2, k_in) / 7,
                    b=[0.1, -0.3], C=np.arange(2.0 * k_out).reshape(k_out, 2) / 3)
    sur = PortedSystem(base.system, PortMap(p.input_names, p.output_names, p.input_units,
                                            p.output_units, p.Tu, p.cu, p.Ty, p.Cx, p.Du, p.cy,
                                            law=law), base.x0)
    save(sur, tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text())["version"] == 4
    back = load(tmp_path / "s.json")
    assert back.ports == sur.ports and back.ports.law == law  # bit for bit
    x, u = np.random.default_rng(5).normal(size=(4, 3)), np.random.default_rng(6).normal(
        size=(4, 3))
    assert np.array_equal(back.outputs(x, u), sur.outputs(x, u))
    # late outputs: version 4 too; a late and delayed file is refused
    late = PortedSystem(base.system, base.ports, base.x0, late_outputs=True)
    save(late, tmp_path / "late.json")
    doc = json.loads((tmp_path / "late.json").read_text())
    assert doc["version"] == 4 and doc["late_outputs"] is True
    assert load(tmp_path / "late.json").late_outputs
    assert not load(tmp_path / "s.json").late_outputs
    edit(tmp_path / "late.json", lambda d: d.update(delayed_feedthrough={"inputs_before": None}))
    with pytest.raises(SurrogateFileError, match="invalid"):
        load(tmp_path / "late.json")
    # a law in a file that claims version 3 is refused by that version's schema
    edit(tmp_path / "s.json", lambda d: d.update(version=3))
    with pytest.raises(SurrogateFileError, match="'law' was unexpected|ports"):
        load(tmp_path / "s.json")


def test_a_static_map_of_order_zero_round_trips(tmp_path):
    """A NonlinearPH without a state (a spring-damper's static map: the port's power law and
    a static law of a modulating input) is written with empty matrices and read back exactly."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation, StaticLaw, simulate

    core = NonlinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 2)),
                       ConvexEffort(np.zeros((0, 0))), PowerDissipation(np.zeros((0, 0)), [], [],
                                                                         [], []),
                       S=[[0.5, 0.0], [0.0, 1e-9]],
                       port_dissipation=PowerDissipation([[1.0, 0.0]], [2.0], [1.0 / 3.0],
                                                         [1e-3], [0.0]))
    law = StaticLaw(("cubic",), W=[[20.0, 0.0]], b=[0.2], C=[[0.7]])
    ports = PortMap(("s", "v"), ("f",), ("m", "m/s"), ("N",), Tu=[[0.0, 1.0], [1.0, 0.0]],
                    cu=[0.0, 0.0], Ty=[[1.0, 0.0]], Cx=np.zeros((1, 0)), Du=[[0.0, 0.0]],
                    cy=[0.0], law=law)
    sur = PortedSystem(core, ports)
    save(sur, tmp_path / "s.json")
    back = load(tmp_path / "s.json")
    assert back.n_states == 0 and back.ports == sur.ports
    t = np.linspace(0.0, 1.0, 11)
    u = np.column_stack([0.05 * np.sin(3 * t), np.cos(5 * t)])
    # the same arithmetic on the same numbers
    np.testing.assert_array_equal(simulate(back, t, u).y, simulate(sur, t, u).y)


def test_outputs_before_the_first_step_are_saved_in_version_5(tmp_path):
    base = ported(np.random.default_rng(4))
    first = [0.0, -1.5e4]
    sur = PortedSystem(base.system, base.ports, base.x0, late_outputs=True, first_outputs=first)
    t = np.linspace(0.0, 1.0, 11)
    u = np.random.default_rng(7).normal(size=(t.size, 3))
    y, y_plain = simulate(sur, t, u).y, simulate(base, t, u).y
    assert np.array_equal(y[0], first)  # shown before the first step, the model's after it
    assert np.array_equal(y[1:], y_plain[:-1])  # late: each point the one before
    save(sur, tmp_path / "first.json")
    doc = json.loads((tmp_path / "first.json").read_text())
    assert doc["version"] == 5 and doc["first_outputs"] == first
    back = load(tmp_path / "first.json")
    assert np.array_equal(back.first_outputs, first) and back.late_outputs
    assert load_check_plain(base, tmp_path).first_outputs is None
    with pytest.raises(StructureError, match="first_outputs must be 2 finite numbers"):
        PortedSystem(base.system, base.ports, base.x0, first_outputs=[1.0])


def load_check_plain(base, tmp_path):
    save(base, tmp_path / "plain.json")
    assert json.loads((tmp_path / "plain.json").read_text())["version"] < 5
    return load(tmp_path / "plain.json")


def test_a_fast_feedthrough_is_saved_in_version_8_and_read_back_bit_for_bit(tmp_path):
    base = ported(np.random.default_rng(4))
    before = [0.1 + 0.2, -1 / 3, np.pi]
    d_f = np.random.default_rng(5).normal(size=(base.n_outputs, base.n_inputs))
    sur = PortedSystem(base.system, base.ports, base.x0, delayed_feedthrough=True,
                       inputs_before=before, fast_feedthrough=d_f)
    save(sur, tmp_path / "fast.json")
    doc = json.loads((tmp_path / "fast.json").read_text())
    assert doc["version"] == 8
    back = load(tmp_path / "fast.json")
    assert np.array_equal(back.fast_feedthrough.view(np.uint64), d_f.view(np.uint64))
    assert np.array_equal(back.inputs_before, before) and back.delayed_feedthrough
    t = np.linspace(0.0, 1.0, 11)
    u = np.random.default_rng(7).normal(size=(t.size, 3))
    np.testing.assert_array_equal(simulate(back, t, u).y, simulate(sur, t, u).y)
    # a version-7 reader's schema has no place for it: the file is refused by version 7
    seven = dict(doc, version=7)
    (tmp_path / "seven.json").write_text(json.dumps(seven))
    with pytest.raises(SurrogateFileError, match="fast_feedthrough"):
        load(tmp_path / "seven.json")
    # version 7 held the same response as first_feedthrough: read as the fast feedthrough
    delay = {"inputs_before": before, "first_feedthrough": d_f.tolist()}
    old = dict(doc, version=7, delayed_feedthrough=delay,
               checksums=dict(doc["checksums"], delayed_feedthrough=_digest(delay)))
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert np.array_equal(load(tmp_path / "old.json").fast_feedthrough, d_f)
