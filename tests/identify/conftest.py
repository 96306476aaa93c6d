"""The mass on a cubic spring with the spring's force measured, and its drop-in surrogate
identified with the defaults: shared by the order-search and sensor-port tests (one fit)."""

from __future__ import annotations

import pytest

from fmu_surrogate.identify import LinearPHIdentifier

#: The power pair of the mass: its force and velocity (the spring's force is measured).
PORTS = [{"u": "F", "y": "v"}]


@pytest.fixture(scope="session")
def spring_force(mass_experiment):
    """``(dataset, linear start)``: the mass of tests/conftest.py (power-law damper, cubic
    spring: two states), force in, velocity and the spring's force out, three runs (the last
    held out), and the linear drop-in fit of the first two, order chosen from the data."""
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    runs = [mass_experiment(s, spring_force=True) for s in (1, 2, 3)]
    recs = [RunRecord(index=i, values={"F": u[:, 0], "v": y[:, 0], "Fs": y[:, 1]})
            for i, (_, u, y) in enumerate(runs)]
    ds = records_to_dataset(recs, runs[0][0], None, ["F", "v", "Fs"])
    lin = LinearPHIdentifier(ports=PORTS).fit_dataset(
        ds, inputs=["F"], outputs=["v", "Fs"], runs=[0, 1])
    return ds, lin


@pytest.fixture(scope="session")
def spring_force_choice(spring_force):
    """:func:`~fmu_surrogate.identify.selection.select_dataset` of :func:`spring_force` with
    the defaults (the power pair named)."""
    from fmu_surrogate.identify.selection import select_dataset

    return select_dataset(spring_force[0], inputs=["F"], outputs=["v", "Fs"],
                          linear=LinearPHIdentifier(ports=PORTS))
