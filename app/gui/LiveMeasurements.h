#pragma once
// What a live run of N iterations measured, instruction by instruction, and how it compares
// with the simulation (issue 14, item 6). Qt-free bookkeeping under LiveRunWindow: the window
// feeds it LiveRun's signals (the protocol is parsed once, in core/io/LiveEvents) and draws
// what it answers.
//
// The first iteration is a warm-up: allocators, thread pools and caches are cold, so its times
// say little about a steady step (on the CPU executor its instructions ran up to several times
// slower). Its times are kept and shown, but medians and deviations use the later iterations;
// only while none of them has been measured (a run of one iteration, or the start of a run)
// do they fall back to the warm-up, and warmupOnly() says so. Medians rather than means: one
// iteration disturbed by the machine must not move the verdict.
#include <optional>
#include <utility>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"

namespace mario::gui {

class LiveMeasurements {
public:
    static constexpr int kWarmupIterations = 1;

    struct Iteration {
        bool finished = false;  // its iteration event arrived
        double step_ms = 0;
        double loss = 0;
        bool warmup() const { return index < kWarmupIterations; }
        int index = 0;
    };
    struct DeviceDeviation {
        double simulated_ms = 0;  // the simulated durations of the instructions measured
        double measured_ms = 0;   // their median measured durations
        int instructions = 0;
    };

    // Forgets every measurement; `simulated` gives each instruction's simulated duration.
    void reset(const Plan& plan, const SimResult& simulated);
    // One instruction of one iteration, in ms on the executor's clock. Out-of-range devices,
    // indices or iterations (a plan other than the one set) are ignored.
    void record(int device, int index, double startMs, double endMs, int iteration);
    void finishIteration(int iteration, double stepMs, double loss);

    // Every iteration seen so far (an instruction or its end arrived), in order.
    const std::vector<Iteration>& iterations() const { return iterations_; }
    // The latest iteration with a measurement, -1 before the first.
    int latestIteration() const;
    // Whether medians fall back to the warm-up (no later iteration measured yet).
    bool warmupOnly() const;

    std::optional<std::pair<double, double>> measured(int iteration, int device, int index) const;
    // Compute instructions of `iteration` measured so far.
    int measuredCount(int iteration) const;
    // The median measured duration of one instruction over the counted iterations.
    std::optional<double> medianDuration(int device, int index) const;
    // How many counted iterations measured it.
    int samples(int device, int index) const;
    double simulatedDuration(int device, int index) const;
    // When the simulation ran it ({0, 0} outside the plan), and the simulated step.
    InstructionTiming simulatedTiming(int device, int index) const;
    double simulatedMakespan() const { return makespan_; }
    // Whether an instruction's measurement can be set against the simulation: a compute
    // instruction of the plan with a positive simulated duration.
    bool comparable(int device, int index) const;
    // Median measured ÷ simulated, for comparable instructions that were measured.
    std::optional<double> ratio(int device, int index) const;
    // The median step of the counted finished iterations; 0 before any finished.
    double medianStepMs() const;
    std::vector<DeviceDeviation> perDevice() const;

    const Plan& plan() const { return plan_; }

private:
    using Times = std::vector<std::vector<std::optional<std::pair<double, double>>>>;  // [device][index]
    Iteration& iteration(int index);
    // The iterations medians use: the measured ones past the warm-up, else the warm-up.
    // Asked for every instruction on every repaint, so it is kept until a measurement arrives.
    const std::vector<int>& countedIterations() const;

    Plan plan_;
    std::vector<InstructionTimings> simulated_;  // [device][index]
    double makespan_ = 0;
    std::vector<Times> times_;        // [iteration]
    std::vector<int> computeCounts_;  // [iteration]: measuredCount, kept as events arrive
    std::vector<Iteration> iterations_;
    mutable std::optional<std::vector<int>> counted_;  // countedIterations(), until the next change
};

}  // namespace mario::gui
