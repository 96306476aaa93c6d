within FmuSurrogateBenchmarks;
model QuarterCar "Quarter-car suspension in gravity (force in; positions, velocities, acceleration out)"
  // Absolute heights above the road (up positive). Released by default with both springs at
  // their free length, so it starts preloaded by gravity and not at rest; it settles where the
  // springs carry the weight. The FMU integrates with fixed-step RK4 (n_substeps per step).
  parameter Real ms(unit = "kg") = 300 "Sprung mass (quarter body)";
  parameter Real mu(unit = "kg") = 40 "Unsprung mass";
  parameter Real ks(unit = "N/m") = 2e4 "Suspension stiffness";
  parameter Real cs(unit = "N.s/m") = 1.5e3 "Suspension damping";
  parameter Real kt(unit = "N/m") = 2e5 "Tyre stiffness";
  parameter Real ls0(unit = "m") = 0.4 "Suspension free length";
  parameter Real lt0(unit = "m") = 0.3 "Tyre free radius";
  parameter Real g(unit = "m/s2") = 9.81 "Gravitational acceleration";
  parameter Real zs0(unit = "m") = lt0 + ls0 "Initial body height";
  parameter Real vs0(unit = "m/s") = 0 "Initial body velocity";
  parameter Real zu0(unit = "m") = lt0 "Initial wheel height";
  parameter Real vu0(unit = "m/s") = 0 "Initial wheel velocity";
  input Real F(unit = "N", start = 0) "External force on the body, up";
  output Real zs(unit = "m", start = zs0, fixed = true) "Body height";
  output Real vs(unit = "m/s", start = vs0, fixed = true) "Body velocity";
  output Real zu(unit = "m", start = zu0, fixed = true) "Wheel height";
  output Real vu(unit = "m/s", start = vu0, fixed = true) "Wheel velocity";
  output Real a_s(unit = "m/s2") "Body acceleration";
  output Real F_tyre(unit = "N") "Tyre load";
protected
  Real fs(unit = "N") "Suspension force (pushes body and wheel apart)";
equation
  fs = ks*(ls0 - zs + zu) + cs*(vu - vs);
  F_tyre = kt*(lt0 - zu);
  der(zs) = vs;
  der(vs) = a_s;
  ms*a_s = fs - ms*g + F;
  der(zu) = vu;
  mu*der(vu) = F_tyre - fs - mu*g;
  annotation (experiment(StartTime = 0, StopTime = 5, Interval = 0.001));
end QuarterCar;
