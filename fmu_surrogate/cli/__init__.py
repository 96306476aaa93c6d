"""The command line ``fmu-surrogate <command>``: one module per command, one error path.

Public name: :func:`main` (the console script; ``python -m fmu_surrogate.cli`` runs it too).
"""

from fmu_surrogate.cli.main import main

__all__ = ["main"]
