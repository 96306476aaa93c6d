"""One expression source for efforts, Jacobians and Hamiltonians, rendered as C, Modelica and numpy."""
