within FmuSurrogateBenchmarks;
model PendulumDAE "Benchmark 3b as a port-Hamiltonian DAE of index 3 (needs index reduction)"
  // x = (q, p, lambda), E = diag(I, I, 0), J = [0, I, 0; -I, 0, 0; 0, 0, 0], R = diag(0, 0, 1),
  // B = (0, b, 0)' with b = (0, m)', z(x) = (dU/dq - (dg/dq)' lambda, p/m, -g(q)),
  // U(q) = g m q2, g(q) = q'q - l^2. The tool must reduce the index (Pantelides / dummy
  // derivatives); the start values are those of Pendulum at alpha0, alpha_dot0.
  parameter Real m = 1 "Mass (> 0)";
  parameter Real l = 1 "Length (> 0)";
  parameter Real g = 1 "Gravitational acceleration";
  parameter Real alpha0 = 0.7853981633974483 "Initial angle (pi/4)";
  parameter Real alpha_dot0 = 0 "Initial angular velocity";
  input Real u(start = 0) "Vertical acceleration input";
  Real q[2](start = {l*sin(alpha0), -l*cos(alpha0)}) "Position";
  Real p[2](start = {m*l*alpha_dot0*cos(alpha0), m*l*alpha_dot0*sin(alpha0)}) "Momentum";
  Real lambda(start = m/(2*l)*(cos(alpha0)*(0 - g) - l*alpha_dot0^2)) "Lagrange multiplier";
  Real z_q[2] "Effort of q";
  Real H "Hamiltonian U(q) + p'p/(2m)";
initial equation
  // fix the angle and the tangential velocity; the constraint fixes the rest
  q[1] = l*sin(alpha0);
  p[1]*cos(alpha0) + p[2]*sin(alpha0) = m*l*alpha_dot0;
equation
  z_q = {0, g*m} - 2*q*lambda;
  der(q) = p/m;
  der(p) = -z_q + {0, m*u};
  0 = q*q - l^2;
  H = g*m*q[2] + p*p/(2*m);
  annotation (experiment(StartTime = 0, StopTime = 30, Interval = 0.01));
end PendulumDAE;
