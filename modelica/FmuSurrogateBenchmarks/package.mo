within;
package FmuSurrogateBenchmarks "Benchmark systems of fmu-surrogate (reference definitions of its benchmark FMUs)"
  annotation (
    version = "0.1.0",
    Documentation(info = "<html>
<p>Equation-level Modelica definitions of the benchmark systems that fmu-surrogate ships as
native FMI&nbsp;2.0 FMUs (C sources in <code>fmu_surrogate/benchmarks/c</code>, built by
<code>fmu-surrogate benchmarks build DIR</code>). Variable and parameter names follow the FMUs;
where an FMU exposes <code>der(x)</code> of a variable that is not a state here, the model
has a variable <code>xdot</code> instead (noted in each model).</p>
<ul>
<li><a href=\"modelica://FmuSurrogateBenchmarks.RCNetwork\">RCNetwork</a>: pH-DAE of index 1 (docs/design.md &sect;3a)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.Pendulum\">Pendulum</a>: planar pendulum in the angle (as the FMU)
and <a href=\"modelica://FmuSurrogateBenchmarks.PendulumDAE\">PendulumDAE</a>: the same as a pH-DAE of index 3 (docs/design.md &sect;3b)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.MSDChain\">MSDChain</a>: mass-spring-damper chain (docs/design.md &sect;4a)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.CauerLowPass\">CauerLowPass</a>: Cauer filter with a nonlinear resistor (docs/design.md &sect;6a)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.Duffing\">Duffing</a>: Duffing oscillator (docs/design.md &sect;5b)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.FreeMass\">FreeMass</a>: free mass with a power-out port (vendor-style)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.QuarterCar\">QuarterCar</a>: quarter-car suspension preloaded by gravity (vendor-style)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.Damper\">Damper</a>: linear damper with direct feedthrough, no state (vendor-style)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.DCMotor\">DCMotor</a>: DC motor with electrical and mechanical ports, field command and discrete direction (vendor-style)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.PowerDamper\">PowerDamper</a>, <a href=\"modelica://FmuSurrogateBenchmarks.ProgressiveSpring\">ProgressiveSpring</a>, <a href=\"modelica://FmuSurrogateBenchmarks.SaturatingInductor\">SaturatingInductor</a>, <a href=\"modelica://FmuSurrogateBenchmarks.SaturatingMotor\">SaturatingMotor</a>: nonlinear components (vendor-style, co-simulation only with internal states)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.ProgressiveSpringDisplacement\">ProgressiveSpringDisplacement</a>, <a href=\"modelica://FmuSurrogateBenchmarks.ProgressiveSpringDamper\">ProgressiveSpringDamper</a>: the progressive spring with its displacement as input, alone and in parallel with the power-law damper in the adaptor convention (vendor-style, no state)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.SprungMassSensor\">SprungMassSensor</a>: mass on a progressive spring with a power-law damper to ground, velocity and acceleration out (the acceleration a measured output with a direct feedthrough of the force; vendor-style, co-simulation only with internal states)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.EndStopMass\">EndStopMass</a>: mass on a spring and a damper with elastic end stops (ElastoGap contacts), velocity and position out (vendor-style, co-simulation only with internal states, contacts not located by its fixed-step solver)</li>
<li><a href=\"modelica://FmuSurrogateBenchmarks.CoupledMassClock\">CoupledMassClock</a>: mass coupled to a driven end, whose FMU steps on a clock of its own as 20-sim's exported FMUs do (vendor-style, co-simulation only, unitless)</li>
</ul>
<p>Self-contained: no library is used (only the Modelica language).</p>
</html>"));
end FmuSurrogateBenchmarks;
