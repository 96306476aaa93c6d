"""Components built the way vendors ship their FMUs, for the drop-in surrogate work: their own
fixed-step solvers, power-out ports, preloads, feedthrough, lossless parts, electrical and
mechanical ports with modulating and discrete inputs, states kept internal, nonlinear laws, and
(the ``*_cvode`` variants, :mod:`fmu_surrogate.benchmarks.cvode`) their own variable-step
SUNDIALS CVODE reinitialised at every communication point; the ``*_detailed`` components are
detailed models behind the lumped ports (a coil spring with mass, a hydraulic damper, a coil with
lamination eddy currents: many internal states, stiff, their own CVODE); :mod:`.stepping` holds
the components that reproduce how a vendor's FMU steps (a clock of its own, as 20-sim's)."""
