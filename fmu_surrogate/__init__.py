"""fmu-surrogate: structure-preserving port-Hamiltonian surrogates of FMUs.

Layers (DESIGN.md §7): ``fmu`` (harvesting, knows nothing of pH), ``ph`` (pH data model,
knows nothing of FMUs), ``identify`` (datasets -> ``ph`` objects), ``export`` (consumes ``ph``).
"""

__version__ = "0.1.0"
