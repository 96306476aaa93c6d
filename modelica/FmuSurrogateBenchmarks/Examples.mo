within FmuSurrogateBenchmarks;
package Examples "The benchmark systems driven by the inputs of the papers"
  model RCNetworkPaper "RC network with u = a (1 + sin(omega t)), a = omega = 1"
    parameter Real a = 1;
    parameter Real omega = 1;
    FmuSurrogateBenchmarks.RCNetwork rc(u = a*(1 + sin(omega*time)));
    annotation (experiment(StartTime = 0, StopTime = 31.41592653589793,
        Interval = 0.010471975511965976));
  end RCNetworkPaper;

  model PendulumPaper "Pendulum with u = beta g cos(2 pi t / tau), beta = tau = 1"
    parameter Real beta = 1;
    parameter Real tau = 1;
    FmuSurrogateBenchmarks.Pendulum pendulum(u = beta*pendulum.g*cos(2*3.141592653589793*time/tau));
    annotation (experiment(StartTime = 0, StopTime = 30, Interval = 0.01));
  end PendulumPaper;

  model CauerDCGain "Unit step into the Cauer filter with the nonlinear branch switched off (w1 large): v3 -> 0.5"
    FmuSurrogateBenchmarks.CauerLowPass filter(vin = if time < 1 then 0 else 1, w1 = 1e12);
    annotation (experiment(StartTime = 0, StopTime = 400, Interval = 0.1));
  end CauerDCGain;
end Examples;
