within FmuSurrogateBenchmarks;
model SaturatingInductor "Coil with saturating flux: psi' = V - R i, i = (psi/L0) (1 + (psi/psi_sat)^2)"
  // V*i = der(H) + R i^2 with H = psi^2/(2 L0) + psi^4/(4 L0 psi_sat^2). The FMU is
  // co-simulation only, keeps psi internal and integrates with fixed-step RK4.
  parameter Real L0(unit = "H") = 0.1 "Unsaturated inductance (> 0)";
  parameter Real psi_sat(unit = "Wb") = 0.5 "Saturation flux linkage (> 0)";
  parameter Real R(unit = "Ohm") = 0.5 "Winding resistance (>= 0)";
  parameter Real psi0(unit = "Wb") = 0 "Initial flux linkage";
  input Real V(unit = "V", start = 0) "Terminal voltage";
  output Real i(unit = "A") "Current";
  Real psi(unit = "Wb", start = psi0, fixed = true) "Flux linkage";
  Real H(unit = "J") "Magnetic energy";
equation
  der(psi) = V - R*i;
  i = psi/L0*(1 + (psi/psi_sat)^2);
  H = psi^2/(2*L0) + psi^4/(4*L0*psi_sat^2);
  annotation (experiment(StartTime = 0, StopTime = 2, Interval = 0.001));
end SaturatingInductor;
