#pragma once
// The simulator's instruction loop (sim/Simulator.h): each device runs until it blocks on a
// receive whose data has not been sent, parked on that message; the send wakes it. Included
// by Simulator.cpp only.
//
// One instance per kind of timing (stretched by contention, recording the memory curve, with
// overlapped pairs), so that the loop tests none of them. A device's run is a function of its
// own that holds what the loop reads in locals: inlined into Simulator::run, with everything
// else there, the loop kept its clock and its table pointers on the stack and reloaded them
// for every instruction (issue 45).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/SharedHardware.h"
#include "core/sim/SimResult.h"
#include "core/sim/SimulationTables.h"

namespace mario {

template <bool kStretch, bool kCurve, bool kOverlap>
class TimingLoop {
public:
    // `result.devices` sized, their timings and static bytes set; `stretch` given iff kStretch.
    TimingLoop(const Plan& plan, SimulationTables& prepared, const ComputeStretch* stretch, SimResult& result)
        : pc(plan.devices.size(), 0), clock(plan.devices.size(), 0.0), plan_(plan), prepared_(prepared),
          stretch_(stretch), result_(result),
          recomputes_(std::any_of(prepared.recomputes.begin(), prepared.recomputes.end(),
                                  [](std::size_t rs) { return rs > 0; })),
          dynamic_(plan.devices.size(), 0.0), runs_(plan.devices.size()) {}

    // Runs every device as far as it can, closes their recomputation runs and leaves the
    // message tables all unsent for the next timing.
    void run() {
        const int deviceCount = static_cast<int>(plan_.devices.size());
        runnable_.resize(deviceCount);
        for (int d = 0; d < deviceCount; ++d) runnable_[d] = deviceCount - 1 - d;
        while (!runnable_.empty()) {
            const int d = runnable_.back();
            runnable_.pop_back();
            runDevice(d);
        }
        prepared_.resetMessages();
        for (int d = 0; d < deviceCount; ++d) closeRun(d, pc[d]);
    }

    std::vector<std::size_t> pc;  // per device: the instruction it stopped at
    std::vector<double> clock;    // per device: when it got there

private:
    // A run of recomputations since the device's last other compute: when it started, how long
    // it is, and how much of it ran before the data of a following receive arrived (the
    // device would have waited that long without it).
    struct RecomputeRun {
        double start = 0, duration = 0, hidden = 0;
        std::size_t first = 0;  // the program index of its first R
        bool open = false;      // an R since the last other compute (zero-length ones too)
    };

    // Closes the device's run before program index `end`: the run's hidden time, and each of its
    // Rs' share of it (the views shade each R by it: views/RecomputeCover.h).
    void closeRun(int d, std::size_t end) {
        RecomputeRun& run = runs_[d];
        if (!run.open) return;
        DeviceStats& stats = result_.devices[d];
        stats.recompute_hidden_ms += run.hidden;
        const double hiddenUntil = run.start + run.hidden;
        const auto& program = plan_.devices[d].program;
        for (std::size_t k = run.first; k < end; ++k)
            if (program[k].op == Op::Recompute) {
                const InstructionTiming& timing = stats.timings[k];
                stats.recompute_hidden.push_back(
                    {k, std::clamp(hiddenUntil - timing.start, 0.0, timing.end - timing.start)});
            }
        run = {};
    }

    [[gnu::always_inline]] inline void runDevice(const int d) {
        constexpr int kFirstMessage = int(Op::SendForward);  // StageRow::message_slot's first kind
        const auto& program = plan_.devices[d].program;
        const Instruction* const code = program.data();
        const std::size_t size = program.size();
        DeviceStats& stats = result_.devices[d];
        InstructionTiming* const timings = stats.timings.data();
        const SimulationTables::StageRow* const rows = prepared_.stages.data();
        const int* const dense = prepared_.messages.denseOf().data();
        double* const arrival = prepared_.arrival.data();
        int* const waiting = prepared_.waiting.data();
        std::size_t* const touched = prepared_.touched.get();
        std::size_t touchedCount = prepared_.touchedCount;
        RecomputeRun& run = runs_[d];
        double t = clock[d];
        double mem = dynamic_[d];
        // The device's running sums in registers while it runs (the same additions).
        double busy = stats.busy_ms, peak = stats.peak_dynamic_bytes;
        std::size_t i = pc[d];
        auto memoryChange = [&](double time, double delta) {
            mem += delta;
            peak = std::max(peak, mem);
            if constexpr (kCurve) stats.memory.push_back({time, stats.static_bytes + mem});
        };
        // computeMs: the stage's cost for the kind, through the pair's rule only when pairs overlap.
        auto timeOf = [&](const SimulationTables::StageRow& row, const Instruction& ins) {
            if constexpr (kOverlap) return computeMs(plan_, program, i);
            return row.duration[int(ins.op)];
        };
        for (; i < size; ++i) {
            const Instruction& ins = code[i];
            const SimulationTables::StageRow& row = rows[ins.stage];
            InstructionTiming& timing = timings[i];
            double duration = 0;
            switch (ins.op) {
                case Op::RecvForward:
                case Op::RecvBackward: {
                    const std::size_t slot = row.message_slot[int(ins.op) - kFirstMessage] + dense[ins.microbatch];
                    const double arrived = arrival[slot];
                    if (std::isnan(arrived)) {
                        waiting[slot] = d;
                        touched[touchedCount++] = slot;
                        goto blocked;
                    }
                    timing = {t, std::max(t, arrived)};
                    t = timing.end;
                    if (run.duration > 0)
                        run.hidden = std::max(run.hidden, std::clamp(arrived - run.start, 0.0, run.duration));
                    continue;
                }
                case Op::SendForward:
                case Op::SendBackward: {
                    timing = {t, t};
                    const int kind = int(ins.op) - kFirstMessage;
                    // No stage to send to: the validator reports it; nothing can receive it.
                    if (row.message_slot[kind] == SimulationTables::kNoSlot) continue;
                    const std::size_t slot = row.message_slot[kind] + dense[ins.microbatch];
                    arrival[slot] = t + row.transfer_ms[kind];
                    touched[touchedCount++] = slot;
                    if (waiting[slot] >= 0) {
                        runnable_.push_back(waiting[slot]);
                        waiting[slot] = -1;
                    }
                    continue;
                }
                case Op::Forward: {
                    duration = timeOf(row, ins);
                    // Checkpointed only where the device recomputes it later: no R, no look-up.
                    const bool checkpointed =
                        recomputes_ && prepared_.checkpointed[static_cast<std::size_t>(ins.stage) *
                                                                  prepared_.microbatches +
                                                              dense[ins.microbatch]];
                    memoryChange(t, checkpointed ? row.checkpoint_bytes : row.forward_bytes);
                    break;
                }
                case Op::Recompute:
                    duration = timeOf(row, ins);
                    memoryChange(t, row.recompute_bytes);
                    break;
                default: duration = timeOf(row, ins); break;
            }
            if constexpr (kStretch) {
                const double alone = duration;
                duration *= (*stretch_)[d][i];
                stats.contention_ms += duration - alone;
            }
            if (ins.op == Op::Recompute) {
                if (!run.open) run.first = i, run.open = true;
                if (run.duration == 0) run.start = t;
                run.duration += duration;
                stats.recompute_ms += duration;
            } else if (run.open) {
                closeRun(d, i);
            }
            timing = {t, t + duration};
            t += duration;
            busy += duration;
            if (ins.op == Op::Backward) memoryChange(t, row.backward_release);
            else if (ins.op == Op::BackwardInput) memoryChange(t, row.input_grad_release);
            else if (ins.op == Op::BackwardWeight) memoryChange(t, row.weight_grad_release);
        }
    blocked:
        prepared_.touchedCount = touchedCount;
        stats.busy_ms = busy;
        stats.peak_dynamic_bytes = peak;
        pc[d] = i;
        clock[d] = t;
        dynamic_[d] = mem;
    }

    const Plan& plan_;
    SimulationTables& prepared_;
    const ComputeStretch* stretch_;
    SimResult& result_;
    const bool recomputes_;          // any R in the plan: only then is a forward checkpointed
    std::vector<double> dynamic_;    // per device: its dynamic memory where it stopped
    std::vector<RecomputeRun> runs_;  // per device: its open run of Rs
    std::vector<int> runnable_;       // devices that can move, the next at the back
};

}  // namespace mario
