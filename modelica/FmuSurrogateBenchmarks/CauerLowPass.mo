within FmuSurrogateBenchmarks;
model CauerLowPass "Benchmark 6a: Cauer low-pass filter (MSL CauerLowPassAnalog) with a nonlinear load branch"
  // Nodes in (= vin), n1, n2, n3: R1 in-n1, C1 n1-0, L1 || C2 n1-n2, C3 n2-0, L2 || C4 n2-n3,
  // C5 n3-0, R2 n3-0, and the branch n3-0: R4 in series with the nonlinear resistor
  // w1 i = w2 v^2 + w3 v^3 (true law w = (1, 0, 0.01)). The branch is an algebraic loop
  // solved by the tool's Newton iteration; infeasible w make it fail (docs/design.md §6).
  parameter Real R1 = 1 "Source resistor";
  parameter Real R2 = 1 "Load resistor";
  parameter Real R4 = 1 "Resistor in series with the nonlinear resistor";
  parameter Real L1 = 1.304 "Inductor L1";
  parameter Real L2 = 0.8586 "Inductor L2";
  parameter Real C1 = 1.072 "Capacitor C1";
  parameter Real C2 = 1/(1.704992^2*L1) "Capacitor C2";
  parameter Real C3 = 1.682 "Capacitor C3";
  parameter Real C4 = 1/(1.179945^2*L2) "Capacitor C4";
  parameter Real C5 = 0.7262 "Capacitor C5";
  parameter Real w1 = 1 "Law w1 i = w2 v^2 + w3 v^3";
  parameter Real w2 = 0 "Law w1 i = w2 v^2 + w3 v^3";
  parameter Real w3 = 0.01 "Law w1 i = w2 v^2 + w3 v^3";
  input Real vin(start = 0) "Source voltage";
  Real v1(start = 0, fixed = true) "Voltage of node n1";
  Real v2(start = 0, fixed = true) "Voltage of node n2";
  Real v3(start = 0, fixed = true) "Voltage of node n3";
  Real iL1(start = 0, fixed = true) "Current through L1 (n1 -> n2)";
  Real iL2(start = 0, fixed = true) "Current through L2 (n2 -> n3)";
  output Real v_R4 "Voltage across R4 (the measured output)";
  output Real v_nl(start = 0) "Voltage across the nonlinear resistor";
  output Real i_nl(start = 0) "Current of the nonlinear branch (n3 -> ground)";
equation
  // node equations (node capacitance matrix [C1+C2, -C2, 0; -C2, C2+C3+C4, -C4; 0, -C4, C4+C5])
  C1*der(v1) + C2*(der(v1) - der(v2)) = (vin - v1)/R1 - iL1;
  C3*der(v2) - C2*(der(v1) - der(v2)) + C4*(der(v2) - der(v3)) = iL1 - iL2;
  C5*der(v3) - C4*(der(v2) - der(v3)) = iL2 - v3/R2 - i_nl;
  L1*der(iL1) = v1 - v2;
  L2*der(iL2) = v2 - v3;
  // nonlinear branch
  v3 = R4*i_nl + v_nl;
  w1*i_nl = w2*v_nl^2 + w3*v_nl^3;
  v_R4 = R4*i_nl;
  annotation (experiment(StartTime = 0, StopTime = 200, Interval = 0.05));
end CauerLowPass;
