within FmuSurrogateBenchmarks;
model MSDChain "Benchmark 4a: mass-spring-damper chain (x' = (J - R) Q x + B u, y = B' Q x)"
  // State x = (q[1], p[1], ..., q[N], p[N]); springs between neighbouring masses and from the
  // last mass to the wall, a damper from every mass to ground; forces F1, F2 act on masses 1
  // and 2, the outputs are their velocities. The FMU fixes N when it is built (default 50).
  parameter Integer N(min = 2) = 50 "Number of cells" annotation (Evaluate = true);
  parameter Real mass = 4 "Mass of every cell (> 0)";
  parameter Real spring = 4 "Spring constant (> 0)";
  parameter Real damper = 1 "Damper to ground (>= 0)";
  input Real F1(start = 0) "Force on mass 1";
  input Real F2(start = 0) "Force on mass 2";
  output Real v1 "Velocity of mass 1";
  output Real v2 "Velocity of mass 2";
  Real q[N](each start = 0, each fixed = true) "Positions";
  Real p[N](each start = 0, each fixed = true) "Momenta";
  Real H "Hamiltonian x'Qx/2";
protected
  Real eq[N] "dH/dq";
equation
  eq[1] = spring*(q[1] - q[2]);
  for j in 2:N - 1 loop
    eq[j] = spring*(2*q[j] - q[j - 1] - q[j + 1]);
  end for;
  eq[N] = spring*(q[N] - q[N - 1]) + spring*q[N] "wall spring on the last mass";
  der(q) = p/mass;
  der(p) = -eq - damper*p/mass + cat(1, {F1, F2}, zeros(N - 2));
  v1 = p[1]/mass;
  v2 = p[2]/mass;
  H = 0.5*(spring*sum((q[j] - q[j + 1])^2 for j in 1:N - 1) + spring*q[N]^2) + 0.5*p*p/mass;
  annotation (experiment(StartTime = 0, StopTime = 1, Interval = 0.001));
end MSDChain;
