"""Vendor-like components that turn over: their energy repeats with every turn of an angle
(:mod:`.pendulum_joint`: a pendulum on a driven joint)."""
