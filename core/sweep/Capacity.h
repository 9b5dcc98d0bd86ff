#pragma once
// Capacity (issue 41): for a knob that grows memory (micro-batch size, sequence length, hidden
// size, layers, …), the largest value on a grid MIN, MIN+STEP, … ≤ MAX whose simulated peak fits
// the memory limit (else the card), per scheme × pass set. Found as tests/bench/paper_eval_lib.py's
// largest() finds it (doubling from MIN, then bisection to STEP) and then CHECKED, not assumed
// monotone: values below the answer are simulated again (a spot check, or every grid value with
// Monotonicity::Scan) and any that does not fit is reported as a violation.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/sweep/SweepPoint.h"
#include "core/sweep/SweepSpec.h"
#include "core/util/Result.h"

namespace mario {

struct CapacitySpec {
    Config base;
    const SweepKnob* knob = nullptr;  // must grow memory (SweepKnob::grows_memory)
    double min = 1, max = 0, step = 1;  // max 0: the knob's own limit
    std::vector<SchemeChoice> schemes;           // empty: the base config's
    std::vector<std::vector<PassId>> pass_sets;  // empty: the base config's own passes
    enum class Monotonicity { Spot, Scan } check = Monotonicity::Spot;
    int threads = 0;  // scheme × pass set searches run in parallel
};

// "KEY" or "KEY=MIN:MAX[:STEP]" into the spec's knob and grid (the CLI's --grow). Without a
// range: MIN = STEP = the knob's natural unit (1; the head size for model.hidden), MAX its limit.
Result<bool> parseGrow(std::string_view text, CapacitySpec& spec);

struct CapacityAnswer {
    SchemeChoice scheme;
    int pass_set = 0;
    std::vector<PassId> passes;
    std::optional<double> largest;     // nullopt: not even MIN fits (see `first_over`)
    std::optional<SweepPoint> at;      // the point at the answer: step, MFU, peak, fullest device
    std::optional<SweepPoint> first_over;  // the next grid value that does not fit, and why
    bool reached_max = false;          // MAX itself fits: the answer is the grid's end
    // No valid value above the answer: why the next one is refused (a micro-batch size above
    // the global batch, …), so that the answer is not mistaken for a memory limit.
    std::string refused_above;
    int probes = 0;                    // points simulated, checks included
    // Empty when the check passed: "micro_batch_size 3 does not fit (device 0, 41.2 GB) below the
    // answer 4".
    std::vector<std::string> violations;
    int checked = 0;  // grid values below the answer simulated by the check
};

struct CapacityProgress {
    int done = 0;   // scheme × pass set searches finished
    int total = 0;
};

struct CapacityResult {
    CapacitySpec spec;
    std::vector<CapacityAnswer> answers;  // scheme outer, pass set inner
    bool cancelled = false;
    double elapsed_ms = 0;
};

Result<CapacityResult> runCapacity(const CapacitySpec& spec,
                                   const std::function<void(const CapacityProgress&)>& progress = {},
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace mario
