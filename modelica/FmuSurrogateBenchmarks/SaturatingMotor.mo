within FmuSurrogateBenchmarks;
model SaturatingMotor "DC motor with a saturating magnetic circuit: psi' = V - R i - k w, i = (psi/L0) (1 + (psi/psi_sat)^2), tau = k i"
  // V*i is power into the motor at the electrical port; tau is the torque delivered to the
  // load, so tau*w is power out of the motor at the shaft: der(H) = V i - tau w - R i^2 with
  // H = psi^2/(2 L0) + psi^4/(4 L0 psi_sat^2). The FMU is co-simulation only, keeps psi
  // internal and integrates with fixed-step RK4 (n_substeps per communication step).
  parameter Real R(unit = "Ohm") = 1 "Armature resistance (>= 0)";
  parameter Real L0(unit = "H") = 0.05 "Unsaturated armature inductance (> 0)";
  parameter Real k(unit = "N.m/A") = 0.1 "Torque constant = back-EMF constant (> 0)";
  parameter Real psi_sat(unit = "Wb") = 0.1 "Saturation flux linkage (> 0)";
  parameter Real psi0(unit = "Wb") = 0 "Initial flux linkage";
  input Real V(unit = "V", start = 0) "Armature voltage";
  input Real w(unit = "rad/s", start = 0) "Shaft speed, imposed by the load";
  output Real i(unit = "A") "Armature current";
  output Real tau(unit = "N.m") "Torque delivered to the load";
  Real psi(unit = "Wb", start = psi0, fixed = true) "Armature flux linkage";
  Real H(unit = "J") "Magnetic energy";
equation
  der(psi) = V - R*i - k*w;
  i = psi/L0*(1 + (psi/psi_sat)^2);
  tau = k*i;
  H = psi^2/(2*L0) + psi^4/(4*L0*psi_sat^2);
  annotation (experiment(StartTime = 0, StopTime = 2, Interval = 0.001));
end SaturatingMotor;
