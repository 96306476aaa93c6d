within FmuSurrogateBenchmarks;
model Pendulum "Benchmark 3b: planar pendulum in the angle, with the variables of its pH-DAE (as the FMU)"
  // alpha'' = -(1/l) (g - u) sin(alpha); q = l (sin a, -cos a), p = m l a' (cos a, sin a),
  // lambda = m/(2 l) (cos a (u - g) - l a'^2). The FMU names q1dot..p2dot der(q1)..der(p2).
  parameter Real m = 1 "Mass (> 0)";
  parameter Real l = 1 "Length (> 0)";
  parameter Real g = 1 "Gravitational acceleration";
  parameter Real alpha0 = 0.7853981633974483 "Initial angle (pi/4)";
  parameter Real alpha_dot0 = 0 "Initial angular velocity";
  input Real u(start = 0) "Vertical acceleration input (paper: beta g cos(2 pi t / tau))";
  Real alpha(start = alpha0, fixed = true) "Angle from the downward vertical";
  Real alpha_dot(start = alpha_dot0, fixed = true) "Angular velocity";
  output Real q1 "l sin(alpha)";
  output Real q2 "-l cos(alpha)";
  output Real p1 "m l alpha' cos(alpha)";
  output Real p2 "m l alpha' sin(alpha)";
  output Real lambda "Lagrange multiplier";
  output Real q1dot "der(q1)";
  output Real q2dot "der(q2)";
  output Real p1dot "der(p1)";
  output Real p2dot "der(p2)";
protected
  Real acc "alpha''";
equation
  der(alpha) = alpha_dot;
  acc = -(g - u)*sin(alpha)/l;
  der(alpha_dot) = acc;
  q1 = l*sin(alpha);
  q2 = -l*cos(alpha);
  p1 = m*l*alpha_dot*cos(alpha);
  p2 = m*l*alpha_dot*sin(alpha);
  lambda = m/(2*l)*(cos(alpha)*(u - g) - l*alpha_dot^2);
  q1dot = l*alpha_dot*cos(alpha);
  q2dot = l*alpha_dot*sin(alpha);
  p1dot = m*l*(acc*cos(alpha) - alpha_dot^2*sin(alpha));
  p2dot = m*l*(acc*sin(alpha) + alpha_dot^2*cos(alpha));
  annotation (experiment(StartTime = 0, StopTime = 30, Interval = 0.01));
end Pendulum;
