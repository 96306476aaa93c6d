"""fs.ph.simulate extrapolated to the exact step of an exported linear surrogate.

The FMU steps a linear surrogate exactly for the input held over a communication step
(``exp([[A, B], [0, 0]] h)``); ``fs.ph.simulate`` steps it with the implicit midpoint rule,
whose error for a held input is an expansion in even powers of the step (the midpoint rule is
the Cayley map ``r(z) = (1 − z/2)⁻¹(1 + z/2) = exp(z − z³/12 + …)``).  Simulating on the
communication grid refined 1, 2, 4, … times and eliminating ``h², h⁴, …`` (Romberg) gives the
exact step to round-off, from ``fs.ph.simulate`` itself.
"""

import numpy as np

from fmu_surrogate.ph import simulate


def extrapolated(system, t, U, x0=None, levels=6, keys=("x", "y")):
    """``{key: array at the nodes t}`` of ``simulate(system, ·, hold="zoh")`` extrapolated to a
    zero sub-step; ``t`` uniform, ``U`` the inputs at ``t`` (held over each step).  Six levels
    (up to 32 sub-steps) reach round-off for ρ(A) h ≲ 0.7."""
    U = np.asarray(U, dtype=float).reshape(t.size, -1)
    table = []
    for j in range(levels):
        k = 2 ** j
        tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
        Uf = np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]])
        tr = simulate(system, tf, Uf, x0, hold="zoh")
        row = [{key: np.asarray(getattr(tr, key))[::k] for key in keys}]
        for i in range(1, j + 1):
            prev, cur = table[j - 1][i - 1], row[i - 1]
            row.append({key: cur[key] + (cur[key] - prev[key]) / (4 ** i - 1) for key in keys})
        table.append(row)
    return table[-1][-1]
