within FmuSurrogateBenchmarks;
model FreeMass "Free mass with a power-out port: m v' = -F (reaction force in, velocity out)"
  // F is the force the mass exerts on its drive (the cut force at the drive), so F*v is power
  // flowing out of the port. Lossless and marginally stable: H = m v^2/2, der(H) = -F v.
  // The FMU built with rotational = true is the same equation in rotational units.
  parameter Real m(unit = "kg") = 2 "Mass (> 0)";
  parameter Real v0(unit = "m/s") = 0 "Initial velocity";
  input Real F(unit = "N", start = 0) "Reaction force (power F*v out of the port)";
  output Real v(unit = "m/s", start = v0, fixed = true) "Velocity";
  Real H(unit = "J") "Kinetic energy";
equation
  m*der(v) = -F;
  H = 0.5*m*v^2;
  annotation (experiment(StartTime = 0, StopTime = 5, Interval = 0.01));
end FreeMass;
