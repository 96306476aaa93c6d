"""The mass on a cubic spring with the spring's force measured, and its drop-in surrogate
identified with the defaults: shared by the order-search and sensor-port tests (one fit)."""

from __future__ import annotations

import pytest

from fmu_surrogate.identify import LinearPHIdentifier

#: The power pair of the mass: its force and velocity (the spring's force is measured).
PORTS = [{"u": "F", "y": "v"}]


def _dataset(mass_experiment, dt):
    """The three runs of the mass (force in; velocity and the spring's force out) sampled at
    ``dt``, as a dataset."""
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    runs = [mass_experiment(s, dt=dt, spring_force=True) for s in (1, 2, 3)]
    recs = [RunRecord(index=i, values={"F": u[:, 0], "v": y[:, 0], "Fs": y[:, 1]})
            for i, (_, u, y) in enumerate(runs)]
    return records_to_dataset(recs, runs[0][0], None, ["F", "v", "Fs"])


@pytest.fixture(scope="session")
def spring_force(mass_experiment):
    """``(dataset, linear start)``: the mass of tests/conftest.py (power-law damper, cubic
    spring: two states), force in, velocity and the spring's force out, three runs sampled at
    20 ms (the last held out), and the linear drop-in fit of the first two, order chosen from
    the data (7: the spring force's harmonics take modes)."""
    ds = _dataset(mass_experiment, 0.02)
    lin = LinearPHIdentifier(ports=PORTS).fit_dataset(
        ds, inputs=["F"], outputs=["v", "Fs"], runs=[0, 1])
    return ds, lin


#: The sampling step of the runs :func:`spring_force_choice` fits (s): at 40 ms the fit takes
#: 90 s instead of 150 s at 20 ms; the linear start is then of order 4, not 7.
CHOICE_DT = 0.04


@pytest.fixture(scope="session")
def spring_force_choice(mass_experiment):
    """:func:`~fmu_surrogate.identify.selection.select_dataset` of the runs of
    :func:`spring_force` sampled at :data:`CHOICE_DT`, with the defaults (the power pair
    named)."""
    from fmu_surrogate.identify.selection import select_dataset

    return select_dataset(_dataset(mass_experiment, CHOICE_DT), inputs=["F"],
                          outputs=["v", "Fs"], linear=LinearPHIdentifier(ports=PORTS))
