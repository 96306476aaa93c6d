within FmuSurrogateBenchmarks;
model RCNetwork "Benchmark 3a: RC network, port-Hamiltonian DAE of index 1"
  // E xdot = (J - R) z(x) + B u with x = (x1, x2, x3), z(x) = (sqrt(2 x1), x2, x3),
  // E = diag(1, 0, 0), J = [0, 0, 0; 0, 0, 1; 0, -1, 0], R = G [1, -1, 0; -1, 1, 0; 0, 0, 0],
  // B = (0, 0, 1)', H(x) = (2 sqrt(2)/3) x1^(3/2).
  parameter Real G = 1 "Conductance (> 0)";
  parameter Real x1_0 = 2 "Initial value of x1 (> 0)";
  input Real u(start = 1) "Input (paper: a (1 + sin(omega t)))";
  output Real x1(start = x1_0, fixed = true) "Differential state";
  output Real x2 "Algebraic state (= u)";
  output Real x3 "Algebraic state (= G (u - sqrt(2 x1)))";
  Real H "Hamiltonian";
equation
  assert(x1 > 0, "x1 <= 0: the storage law sqrt(2 x1) of the RC network is undefined");
  // the three rows of the pH-DAE
  der(x1) = -G*sqrt(2*x1) + G*x2;
  0 = G*sqrt(2*x1) - G*x2 + x3;
  0 = -x2 + u;
  H = 2*sqrt(2)/3*x1^1.5;
  annotation (experiment(StartTime = 0, StopTime = 31.41592653589793,
      Interval = 0.010471975511965976));
end RCNetwork;
