within FmuSurrogateBenchmarks;
model ProgressiveSpringDamper "Progressive spring and power-law damper in parallel, adaptor convention: s and v in, f out"
  // f = k x (1 + (x/x_ref)^2) + c sign(v) |v|^(4/3) with x = x0 + s; an importer sets s and v
  // (independently in a harvest); f v is power into the component.
  parameter Real k(unit = "N/m") = 100 "Stiffness at x = 0 (> 0)";
  parameter Real x_ref(unit = "m") = 0.05 "Elongation at which the stiffness term has doubled (> 0)";
  parameter Real x0(unit = "m") = 0.01 "Elongation at s = 0 (preload)";
  parameter Real c = 4 "Damper coefficient in N/(m/s)^(4/3) (>= 0)";
  input Real s(unit = "m", start = 0) "Displacement of the driven end from its preloaded position";
  input Real v(unit = "m/s", start = 0) "Velocity of the driven end";
  output Real f(unit = "N") "Force";
protected
  Real x(unit = "m") "Elongation";
equation
  x = x0 + s;
  f = k*x*(1 + (x/x_ref)^2) + c*sign(v)*abs(v)^(4/3);
  annotation (experiment(StartTime = 0, StopTime = 1, Interval = 0.01));
end ProgressiveSpringDamper;
