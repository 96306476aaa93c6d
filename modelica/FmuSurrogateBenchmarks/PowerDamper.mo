within FmuSurrogateBenchmarks;
model PowerDamper "Power-law damper with direct feedthrough: F = c sign(v) |v|^(4/3) (no state)"
  // F*v = c |v|^(7/3) >= 0 flows into the damper. The FMU is co-simulation only.
  parameter Real c = 4 "Coefficient in N/(m/s)^(4/3) (>= 0)";
  input Real v(unit = "m/s", start = 0) "Rod velocity";
  output Real F(unit = "N") "Force to move the rod";
equation
  F = c*sign(v)*abs(v)^(4/3);
  annotation (experiment(StartTime = 0, StopTime = 1, Interval = 0.01));
end PowerDamper;
