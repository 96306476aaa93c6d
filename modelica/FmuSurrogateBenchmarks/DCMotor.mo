within FmuSurrogateBenchmarks;
model DCMotor "Separately excited DC motor: electrical and mechanical ports, field command, reversing contactor"
  // Both ports take power in: V*i into the electrical port, tau*w into the mechanical one
  // (tau is the flange torque, the torque of the shaft on the motor). direction = 1 forward,
  // -1 reverse, 0 armature short-circuited and disconnected from the supply (dynamic braking).
  // The FMU integrates with fixed-step RK4 (n_substeps per communication step).
  parameter Real R(unit = "Ohm") = 1 "Armature resistance (> 0)";
  parameter Real L(unit = "H") = 0.05 "Armature inductance (> 0)";
  parameter Real k(unit = "N.m/A") = 0.5 "Torque constant at rated field (> 0)";
  parameter Real i0(unit = "A") = 0 "Initial armature current";
  input Real V(unit = "V", start = 0) "Supply voltage";
  input Real w(unit = "rad/s", start = 0) "Shaft speed";
  input Real field(unit = "1", start = 1) "Field command (flux fraction, >= 0)";
  input Integer direction(start = 1) "Reversing contactor: 1, -1 or 0 (braking)";
  output Real i(unit = "A") "Supply current";
  output Real tau(unit = "N.m") "Flange torque";
  output Boolean braking "True while direction = 0";
  Real i_a(unit = "A", start = i0, fixed = true) "Armature current";
  Real H(unit = "J") "Magnetic energy";
equation
  L*der(i_a) = direction*V - R*i_a - k*field*w;
  i = direction*i_a;
  tau = -k*field*i_a;
  braking = direction == 0;
  H = 0.5*L*i_a^2;
  annotation (experiment(StartTime = 0, StopTime = 2, Interval = 0.001));
end DCMotor;
