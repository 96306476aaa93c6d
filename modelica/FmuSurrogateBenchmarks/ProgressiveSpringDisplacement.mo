within FmuSurrogateBenchmarks;
model ProgressiveSpringDisplacement "Progressive spring with a displacement input: F = k x (1 + (x/x_ref)^2), x = x0 + s"
  // The spring of ProgressiveSpring exported with another interface: the displacement s of the
  // driven end is an input, no state; F s is energy, not power (F is a measured output of s).
  parameter Real k(unit = "N/m") = 100 "Stiffness at x = 0 (> 0)";
  parameter Real x_ref(unit = "m") = 0.05 "Elongation at which the stiffness term has doubled (> 0)";
  parameter Real x0(unit = "m") = 0.01 "Elongation at s = 0 (preload)";
  input Real s(unit = "m", start = 0) "Displacement of the driven end from its preloaded position";
  output Real F(unit = "N") "Spring force";
protected
  Real x(unit = "m") "Elongation";
equation
  x = x0 + s;
  F = k*x*(1 + (x/x_ref)^2);
  annotation (experiment(StartTime = 0, StopTime = 1, Interval = 0.01));
end ProgressiveSpringDisplacement;
