within FmuSurrogateBenchmarks;
model ProgressiveSpring "Progressive spring: x' = v, F = k x (1 + (x/x_ref)^2)"
  // Lossless: F = dH/dx with H = k x^2/2 + k x^4/(4 x_ref^2). Preloaded by x0. The FMU
  // progressive_spring keeps x internal (co-simulation only); progressive_spring_me declares it.
  parameter Real k(unit = "N/m") = 100 "Stiffness at x = 0 (> 0)";
  parameter Real x_ref(unit = "m") = 0.05 "Elongation at which the stiffness term has doubled (> 0)";
  parameter Real x0(unit = "m") = 0.01 "Initial elongation";
  input Real v(unit = "m/s", start = 0) "Elongation rate";
  output Real F(unit = "N") "Spring force";
  Real x(unit = "m", start = x0, fixed = true) "Elongation";
  Real H(unit = "J") "Stored energy";
equation
  der(x) = v;
  F = k*x*(1 + (x/x_ref)^2);
  H = k*x^2/2 + k*x^4/(4*x_ref^2);
  annotation (experiment(StartTime = 0, StopTime = 1, Interval = 0.01));
end ProgressiveSpring;
