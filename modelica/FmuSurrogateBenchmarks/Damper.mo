within FmuSurrogateBenchmarks;
model Damper "Linear damper with direct feedthrough: F = c v (no state)"
  // F is the force needed to move the rod at v: F*v = c v^2 flows into the damper.
  parameter Real c(unit = "N.s/m") = 4 "Damping coefficient (>= 0)";
  input Real v(unit = "m/s", start = 0) "Rod velocity";
  output Real F(unit = "N") "Force to move the rod";
equation
  F = c*v;
  annotation (experiment(StartTime = 0, StopTime = 1, Interval = 0.01));
end Damper;
