within FmuSurrogateBenchmarks;
model EndStopMass "Mass on a spring and a damper with elastic end stops: F in, v and s out"
  // m der(v) = F - k s - c v + f_stop, der(s) = v. Each stop is Modelica's
  // Translational.Components.ElastoGap between the mass and the housing (exponent n = 1):
  // beyond s_max the contact spring f_c = kc (s - s_max) and the contact damper
  // f_d = dc v, limited to |f_d| <= f_c, push the mass back with f_c + f_d (never pulling);
  // below s_min the same mirrored. F*v = der(H) + c v^2 + |f_d v| with
  // H = m v^2/2 + k s^2/2 + kc max(s - s_max, 0)^2/2 + kc max(s_min - s, 0)^2/2.
  // The FMU is co-simulation only, keeps s and the momentum m v internal and integrates with
  // fixed-step RK4 in substeps of at most max_step, the contacts not located (noEvent here).
  parameter Real m(unit = "kg") = 1 "Mass (> 0)";
  parameter Real k(unit = "N/m") = 40 "Spring to the housing (>= 0)";
  parameter Real c(unit = "N.s/m") = 2 "Damper to the housing (>= 0)";
  parameter Real kc(unit = "N/m") = 400 "Contact spring of each stop (>= 0)";
  parameter Real dc(unit = "N.s/m") = 0 "Contact damper of each stop (>= 0), limited by the contact spring's force";
  parameter Real s_max(unit = "m") = 0.05 "Upper stop: contact for s > s_max (> 0)";
  parameter Real s_min(unit = "m") = -0.05 "Lower stop: contact for s < s_min (< 0)";
  parameter Real s0(unit = "m") = 0 "Initial position";
  parameter Real v0(unit = "m/s") = 0 "Initial velocity";
  input Real F(unit = "N", start = 0) "Force on the mass";
  output Real v(unit = "m/s", start = v0, fixed = true) "Velocity of the mass";
  output Real s(unit = "m", start = s0, fixed = true) "Position of the mass from rest";
  Real f_c_upper(unit = "N") "Contact spring force of the upper stop (>= 0)";
  Real f_c_lower(unit = "N") "Contact spring force of the lower stop (>= 0)";
  Real f_stop(unit = "N") "Force of the stops on the mass along s";
  Real H(unit = "J") "Stored energy";
equation
  f_c_upper = noEvent(if s > s_max then kc*(s - s_max) else 0);
  f_c_lower = noEvent(if s < s_min then kc*(s_min - s) else 0);
  f_stop = -(f_c_upper + noEvent(min(max(dc*v, -f_c_upper), f_c_upper)))
           + (f_c_lower + noEvent(min(max(-dc*v, -f_c_lower), f_c_lower)));
  der(s) = v;
  m*der(v) = F - k*s - c*v + f_stop;
  H = m*v^2/2 + k*s^2/2 + kc*max(s - s_max, 0)^2/2 + kc*max(s_min - s, 0)^2/2;
  annotation (experiment(StartTime = 0, StopTime = 10, Interval = 0.01));
end EndStopMass;
