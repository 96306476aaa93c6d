import pytest

from fmu_surrogate.couple.example import example_system


@pytest.fixture(scope="session")
def system_factory():
    """A fresh chain + spring example system per call (components are mutable)."""
    return lambda **kw: example_system(**kw)
