within FmuSurrogateBenchmarks;
model SprungMassSensor "Mass on a progressive spring with a power-law damper to ground: F in, v and a out"
  // m a = F - k x (1 + (x/x_ref)^2) - c sign(v) |v|^(4/3), der(x) = v, der(v) = a.
  // F*v = der(H) + c |v|^(7/3) with H = m v^2/2 + k x^2/2 + k x^4/(4 x_ref^2). The FMU is
  // co-simulation only, keeps x and the momentum m v internal and integrates with fixed-step
  // RK4; v is the power port's output, a a measured output of the current state and force.
  parameter Real m(unit = "kg") = 2 "Mass (> 0)";
  parameter Real k(unit = "N/m") = 200 "Spring stiffness at x = 0 (> 0)";
  parameter Real x_ref(unit = "m") = 0.05 "Elongation at which the stiffness term has doubled (> 0)";
  parameter Real c = 20 "Damper coefficient in N/(m/s)^(4/3) (>= 0)";
  parameter Real x0(unit = "m") = 0 "Initial elongation";
  parameter Real v0(unit = "m/s") = 0 "Initial velocity";
  input Real F(unit = "N", start = 0) "Force on the mass";
  output Real v(unit = "m/s", start = v0, fixed = true) "Velocity of the mass";
  output Real a(unit = "m/s2") "Acceleration of the mass";
  Real x(unit = "m", start = x0, fixed = true) "Elongation of the spring";
  Real H(unit = "J") "Stored energy";
equation
  der(x) = v;
  der(v) = a;
  m*a = F - k*x*(1 + (x/x_ref)^2) - c*sign(v)*abs(v)^(4/3);
  H = m*v^2/2 + k*x^2/2 + k*x^4/(4*x_ref^2);
  annotation (experiment(StartTime = 0, StopTime = 10, Interval = 0.01));
end SprungMassSensor;
