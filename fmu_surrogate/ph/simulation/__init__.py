"""Structure-preserving simulation of pH systems: implicit midpoint and average vector field
(``integrators.simulate``), their steps, Newton solves, consistent algebraic states, the
trajectory with its discrete energy balance, and the simulation of drop-in surrogates through
their ports."""
