"""The static law of the modulating inputs: candidates, the selected start, the wiring it
takes, and the fit of a known law through fit_dataset."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.nonlinear.input_law import (
    CUBIC_QUANTILES,
    HINGE_QUANTILES,
    law_candidates,
    law_start,
    modulating_inputs,
)
from fmu_surrogate.ph import PortMap


def wiring(units=("m", "m/s", "m"), power=(1,)) -> PortMap:
    """Three inputs (s1, v, s2) and one output f: the inputs in ``power`` drive the one power
    port, the others are modulating ports (no conjugate output shown), plus a source port."""
    k = len(units)
    Tu = np.vstack([np.eye(k), np.zeros((1, k))])
    Ty = np.zeros((1, k + 1))
    Ty[0, list(power)] = 1.0
    return PortMap(("s1", "v", "s2")[:k], ("f",), units, ("N",), Tu=Tu,
                   cu=np.r_[np.zeros(k), 1.0], Ty=Ty, Cx=np.zeros((1, 0)), Du=np.zeros((1, k)),
                   cy=[0.0])


def inputs(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-0.05, 0.07, n), rng.normal(0, 1, n),
                            rng.uniform(-0.02, 0.02, n)])


def test_candidates_are_per_modulating_input_and_difference_of_the_same_unit():
    U = inputs()
    assert modulating_inputs(wiring()) == [0, 2]
    cand = law_candidates(wiring(), U)
    per = len(CUBIC_QUANTILES) + 3 + len(HINGE_QUANTILES)
    # s1, s2 and s1 − s2 (both in m); v is the power input: none of it
    assert cand.n_terms == 3 * per
    assert sorted(set(cand.arguments)) == ["s1", "s1 - s2", "s2"]
    assert not np.any(cand.directions[:, 1]) and not np.any(cand.C)
    # a hinge's knot is its quantile: a (s − q)/σ with a = 1/σ, b = −q/σ
    k = cand.arguments.index("s1") + len(CUBIC_QUANTILES) + 3 + 2  # the median hinge
    assert cand.kinds[k] == "hinge"
    assert -cand.offset[k] / cand.scale[k] == pytest.approx(np.median(U[:, 0]), rel=1e-12)
    # other units: no difference term; an input of few levels (a switch): no term at all
    assert sorted(set(law_candidates(wiring(("m", "m/s", "rad")), U).arguments)) == ["s1", "s2"]
    U[:, 2] = np.sign(U[:, 2])
    assert sorted(set(law_candidates(wiring(), U).arguments)) == ["s1"]
    assert law_candidates(wiring(power=(0, 1, 2)), U) is None


def test_a_known_law_is_recovered_by_the_selected_terms():
    """``f = 1.2 + 40 s1 + 9e4 (s1 − 0.02)³ + 30 max(s1 − q, 0)`` (q the median knot) on the
    residual of a linear start that has nothing: the selection takes the terms the law needs
    and the least squares with the affine map recover it."""
    U = inputs()
    s = U[:, 0]
    q = np.quantile(s, 0.5)
    f = 1.2 + 40 * s + 9e4 * (s - 0.02) ** 3 + 30 * np.maximum(s - q, 0)
    cand = law_candidates(wiring(), U)
    allowed = np.ones((1, 4), dtype=bool)
    law, aff = law_start(cand, U, f[:, None], np.sqrt([np.mean(f * f)]), allowed)
    assert "hinge" in law.kinds and law.kinds.count("cubic") >= 2 and law.n_terms <= 5
    assert set(law.arguments) == {"s1"}
    g = law.law(law.scale, law.offset, law.C)
    fit = g.values(U)[:, 0] + U @ aff[0, :3] + aff[0, 3]
    # exact in the dictionary (cubics span the cubic polynomials, the hinge's knot is one of
    # the candidates'): measured 1.5e-8 of the law's peak (two hinges and two cubics), the
    # ridge 1e-9 and round-off of the normal equations; 1e-6 leaves room for BLAS
    assert np.abs(fit - f).max() <= 1e-6 * np.abs(f).max()
    # on a grid the fit did not see, inside the data's range
    sg = np.linspace(-0.045, 0.065, 23)
    Ug = np.column_stack([sg, np.zeros((23, 2))])
    fg = 1.2 + 40 * sg + 9e4 * (sg - 0.02) ** 3 + 30 * np.maximum(sg - q, 0)
    assert np.abs(g.values(Ug)[:, 0] + Ug @ aff[0, :3] + aff[0, 3] - fg).max() <= \
        1e-6 * np.abs(fg).max()


def test_no_law_of_inputs_the_outputs_do_not_depend_on():
    """A residual that is noise independent of the modulating inputs: each candidate removes
    about 1/N of it by chance, below the 1 % a term must remove."""
    U = inputs()
    r = np.random.default_rng(7).normal(size=(len(U), 1))
    law, aff = law_start(law_candidates(wiring(), U), U, r, np.ones(1),
                         np.ones((1, 4), dtype=bool))
    assert law is None and not aff.any()


def test_a_law_of_a_difference_is_found_as_one():
    """``f = 5e5 (s1 − s2)³``: a relative displacement, one argument."""
    U = inputs()
    d = U[:, 0] - U[:, 2]
    f = 5e5 * d ** 3
    law, aff = law_start(law_candidates(wiring(), U), U, f[:, None], np.sqrt([np.mean(f * f)]),
                         np.ones((1, 4), dtype=bool))
    assert set(law.arguments) == {"s1 - s2"}
    fit = law.law(law.scale, law.offset, law.C).values(U)[:, 0] + U @ aff[0, :3] + aff[0, 3]
    # a cubic of the argument is in the span of the cubics and the affine map: measured 6e-8
    # (greedy selection takes a hinge and two tanh on the way), bound as above
    assert np.abs(fit - f).max() <= 1e-6 * np.abs(f).max()
