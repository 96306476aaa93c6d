"""The linear example system of the coupling layer: a mass-spring-damper chain bonded to a spring.

Component ``chain`` is the benchmark FMU ``msd_chain`` (docs/design.md §4) with ``n_cells``
masses: inputs are the forces ``F1``, ``F2``, outputs the velocities ``v1``, ``v2``.  Component
``spring`` is a one-state linear pH FMU with impedance causality (input velocity ``v``, output
force ``F``), compiled from ``c/spring_port.c`` with the package's shared FMU framework.  One power bond
joins them: the chain's velocity ``v1`` drives the spring, the spring's force acts on mass 1.
The coupling matrix of the pH ports is ``Ĉ = [[0, 1], [−1, 0]]`` — skew.

The spring's output is the force it exerts on mass 1, ``F = −k q`` with ``q' = v``, so
``chain.F1 = spring.F`` and ``spring.v = chain.v1`` are plain connections.  In pH form the spring
is ``q' = u``, ``y = k q`` with port ``(u, y) = (v, −F)``: ``F · v`` is power *into* the chain and
*out of* the spring, the sign pair (+1, −1) that makes the bond skew.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fmu_surrogate.benchmarks.build import (
    benchmark_fmu,
    default_cache_dir,
    write_if_changed,
)
from fmu_surrogate.benchmarks.msd_chain import msd_chain
from fmu_surrogate.benchmarks.specs import solver_variables
from fmu_surrogate.couple.system import Component, Connection, PowerBond, System
from fmu_surrogate.export.fmi.model_description import (
    FRAMEWORK_HEADER,
    FRAMEWORK_SOURCE,
    GENERATED_HEADER,
    Experiment,
    ModelSpec,
    Var,
)
from fmu_surrogate.fmu.model.compile import build_fmu
from fmu_surrogate.ph import LinearPH

__all__ = [
    "SPRING_SOURCE", "chain_ph", "example_system", "spring_fmu", "spring_ph", "spring_spec",
]

#: C source of the spring component.
SPRING_SOURCE = Path(__file__).parent / "c" / "spring_port.c"


def spring_spec() -> ModelSpec:
    """Model description of the spring component (one state, one velocity/force port)."""
    v = [
        Var("v", "input", start=0.0, unit="m/s", description="velocity of the attached mass (flow)"),
        Var("k", "parameter", "tunable", 4.0, unit="N/m", description="stiffness k (> 0)"),
        Var("q0", "parameter", "fixed", 0.0, unit="m", description="initial elongation"),
        Var("q", description="elongation q, H = k q^2 / 2"),
        Var("der(q)", derivative="q", description="q' = v"),
        Var("F", "output", unit="N", description="force on the attached mass, F = -k q (effort)"),
        *solver_variables(),
    ]
    return ModelSpec("spring_port", "Linear pH spring with one velocity/force power port",
                     "spring_port.c", tuple(v), Experiment(0.0, 1.0, 1e-3))


def spring_fmu(cache_dir: str | Path | None = None) -> Path:
    """Path of the spring component FMU, compiled into the cache on first use.

    Parameters
    ----------
    cache_dir : path, optional
        Default: the benchmark FMU cache (``$FMU_SURROGATE_CACHE``).

    Returns
    -------
    Path
    """
    out = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    spec = spring_spec()
    gen = out / ".build" / "spring_port"
    xml = spec.model_description_xml()
    write_if_changed(gen / GENERATED_HEADER, spec.c_header())
    return build_fmu([FRAMEWORK_SOURCE, SPRING_SOURCE], xml, out / "spring_port.fmu",
                     spec.identifier, headers=[FRAMEWORK_HEADER, gen / GENERATED_HEADER])


def chain_ph(n_cells: int, mass: float = 4.0, spring: float = 4.0, damper: float = 1.0) -> LinearPH:
    """The msd_chain FMU as a :class:`~fmu_surrogate.ph.LinearPH` (inputs F1, F2; outputs v1, v2)."""
    return msd_chain(n_cells, mass=mass, spring=spring, damper=damper)


def spring_ph(k: float = 4.0) -> LinearPH:
    """The spring component as a linear pH system: ``q' = u``, ``y = k q`` (port ``(v, −F)``)."""
    return LinearPH(np.zeros((1, 1)), np.zeros((1, 1)), [[k]], [[1.0]])


def example_system(n_cells: int = 2, q0: float = 0.5, k: float = 4.0,
                   cache_dir: str | Path | None = None) -> System:
    """The chain + spring system with one power bond, pH models attached (monolithic works).

    Parameters
    ----------
    n_cells : int
        Masses of the chain.
    q0 : float
        Initial elongation of the spring (the only energy at t = 0: ``k q0² / 2``).
    k : float
        Spring stiffness.
    cache_dir : path, optional
        Where the FMUs are built.
    """
    chain = Component("chain", benchmark_fmu("msd_chain", cache_dir, n_cells=n_cells),
                      ph=chain_ph(n_cells),
                      ports={"F1": ("u", 0, 1), "F2": ("u", 1, 1), "v1": ("y", 0, 1),
                             "v2": ("y", 1, 1)})
    spring = Component("spring", spring_fmu(cache_dir), {"k": k, "q0": q0}, ph=spring_ph(k),
                       ports={"v": ("u", 0, 1), "F": ("y", 0, -1)}, x0=np.array([q0]))
    bond = PowerBond("mass1", Connection.parse("spring.F", "chain.F1"),
                     Connection.parse("chain.v1", "spring.v"), {"chain": 1, "spring": -1})
    return System({"chain": chain, "spring": spring}, [], [bond])
