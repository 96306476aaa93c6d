"""Surrogate files: exact round trips for every kind, and damaged files refused by field."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from fmu_surrogate.ph import (
    PHDAE,
    KernelEffort,
    LinearPH,
    StructureError,
    SurrogateFileError,
    interconnect,
    load,
    save,
)


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
    for k in ("E", "J", "R", "B") + (("Q",) if isinstance(a, LinearPH) else ()):
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
    "newer version": (lambda p: edit(p, lambda d: d.update(version=2)),
                      "field 'version' is 2, newer"),
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
