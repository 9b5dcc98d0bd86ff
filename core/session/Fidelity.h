#pragma once
// How far a simulation is from a measurement: one formula for the window's live run, the
// fidelity benchmark (tests/bench/executor_fidelity.sh computes the same) and the notes we
// write. Signed and relative to the measurement, (simulated − measured) / measured: +3% means
// the simulation predicted 3% more time than the hardware took.
namespace mario {

// 0 when nothing was measured (measured ≤ 0), so a missing reading never reads as a huge error.
double simulationError(double simulated, double measured);

}  // namespace mario
