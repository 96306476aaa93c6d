"""Testing aids for users and for the package's own tests and benchmarks.

``fmu_surrogate.testing.fmus`` builds small purpose-made FMUs (e.g. one that fails on demand) with
the system C compiler; the surrogate assertions and the pytest plugin live beside it.
"""

from fmu_surrogate.testing.surrogates import assert_surrogate_matches

__all__ = ["assert_surrogate_matches"]
