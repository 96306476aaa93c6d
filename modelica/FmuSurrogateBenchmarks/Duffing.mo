within FmuSurrogateBenchmarks;
model Duffing "Duffing oscillator m y'' + c y' + (a + b y^2) y = u (docs/design.md §5)"
  parameter Real m = 1 "Mass (> 0)";
  parameter Real c = 2.151 "Damping";
  parameter Real a = 10 "Linear stiffness";
  parameter Real b = 1e5 "Cubic stiffness";
  parameter Real y0 = 0 "Initial displacement";
  parameter Real ydot0 = 0 "Initial velocity";
  input Real u(start = 0) "External force";
  output Real y(start = y0, fixed = true) "Displacement";
  output Real ydot(start = ydot0, fixed = true) "Velocity";
  output Real yddot "Acceleration";
equation
  der(y) = ydot;
  der(ydot) = yddot;
  m*yddot + c*ydot + (a + b*y^2)*y = u;
  annotation (experiment(StartTime = 0, StopTime = 10, Interval = 0.02));
end Duffing;
