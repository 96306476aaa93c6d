within FmuSurrogateBenchmarks;
model CoupledMassClock "Mass on a spring and damper to ground coupled to a driven end: m2 x2'' = fk - c2 x2 - d2 x2', fk = cc (x1 - x2) + dc (v1 - v2)"
  // fk is the coupling force at the driven end, positive when it pushes the driven end back
  // (compressed): fk*v1 is power into the component. The physics only: the FMU
  // coupled_mass_clock integrates it with fixed-step RK4 on a clock of its own (clock +=
  // solver_step, stepped while clock < t_k + h_k without a tolerance, as 20-sim's exported
  // FMUs do), keeps (x2, v2) internal and gives no units.
  parameter Real m2(unit = "kg") = 1 "Mass (> 0)";
  parameter Real c2(unit = "N/m") = 20 "Stiffness of the spring to ground (>= 0)";
  parameter Real d2(unit = "N.s/m") = 0.5 "Damping of the damper to ground (>= 0)";
  parameter Real cc(unit = "N/m") = 100 "Stiffness of the coupling spring (>= 0)";
  parameter Real dc(unit = "N.s/m") = 1 "Damping of the coupling damper (>= 0)";
  input Real x1(unit = "m", start = 0) "Position of the driven end";
  input Real v1(unit = "m/s", start = 0) "Velocity of the driven end";
  output Real fk(unit = "N") "Coupling force at the driven end (positive: pushes it back)";
  output Real x2(unit = "m", start = 0, fixed = true) "Position of the mass";
  output Real v2(unit = "m/s", start = 0, fixed = true) "Velocity of the mass";
equation
  fk = cc*(x1 - x2) + dc*(v1 - v2);
  der(x2) = v2;
  m2*der(v2) = fk - c2*x2 - d2*v2;
  annotation (experiment(StartTime = 0, StopTime = 3, Interval = 0.01));
end CoupledMassClock;
