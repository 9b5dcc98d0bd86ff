#pragma once
// The simulator's instruction loop (sim/Simulator.h): each device runs until it blocks on a
// receive whose data has not been sent, parked on that message; the send wakes it. Included
// by Simulator.cpp only.
//
// One instance per kind of timing (stretched by contention, recording the memory curve, with
// overlapped pairs, with the summary's sums), so that the loop tests none of them. With the
// summary, the loop also makes what the lower bounds and FLOPs need (SimulationTables::SummarySums)
// from the stage row it loads for each computation: a walk of its own over the programs for them
// was a third of a simulation (issue 45). A deadlocked device's instructions after the one it
// stopped at are summed after the loop, so that the sums cover the whole plan either way. A device's run is a function of its
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

template <bool kStretch, bool kCurve, bool kOverlap, bool kRecompute, bool kSummary>
class TimingLoop {
public:
    // `result.devices` sized, their timings and static bytes set; `stretch` given iff kStretch.
    TimingLoop(const Plan& plan, SimulationTables& prepared, const ComputeStretch* stretch, SimResult& result)
        : plan_(plan), prepared_(prepared), stretch_(stretch), result_(result),
          devices_(plan.devices.size()), runnable_(plan.devices.size()) {
        for (std::size_t d = 0; d < devices_.size(); ++d) {
            DeviceRun& device = devices_[d];
            device.at = prepared.code[d];
            device.end = device.at + plan.devices[d].program.size();
            device.timing = result.devices[d].timings.data();
        }
    }

    // Runs every device as far as it can, closes their recomputation runs and leaves the
    // message tables all unsent for the next timing.
    void run() {
        const int deviceCount = static_cast<int>(devices_.size());
        if (prepared_.messagesUntracked) prepared_.resetMessages();
        // Only contention rounds list the slots they send to: the list's room (one slot per
        // instruction) is made by the first of them, not by every simulation.
        if constexpr (kStretch)
            if (!prepared_.touched) prepared_.touched.reset(new std::size_t[std::max<std::size_t>(1, plan_.instructionCount())]);
        // A device is on the stack at most once: it is pushed at the start or by the one send
        // it waits for, and then it runs until it waits again.
        int* const runnable = runnable_.data();
        int runnableCount = deviceCount;
        for (int d = 0; d < deviceCount; ++d) runnable[d] = deviceCount - 1 - d;
        while (runnableCount > 0) runDevice(runnable[--runnableCount], runnable, runnableCount);
        for (int d = 0; d < deviceCount; ++d) {
            const DeviceRun& device = devices_[d];
            DeviceStats& stats = result_.devices[d];
            stats.busy_ms = device.busy;
            stats.peak_dynamic_bytes = device.peak;
            // Still waiting (a deadlock): no send will clear its slot.
            if (device.at != device.end) device.blocked->waiting = -1;
        }
        // A contention round resets the slots it sent to; a single timing leaves them for the
        // next timing, if any, to reset whole (the list cost every send a store).
        if constexpr (kStretch) prepared_.resetMessages();
        else prepared_.messagesUntracked = true;
        if constexpr (kRecompute)
            for (int d = 0; d < deviceCount; ++d) closeRun(d, pcOf(d));
        if constexpr (kSummary) collectSums();
    }

    // Per device, the instruction it stopped at and when it got there (read from its run: two
    // vectors for them were two allocations a simulation).
    std::size_t pcOf(int d) const { return static_cast<std::size_t>(devices_[d].at - prepared_.code[d]); }
    double clockOf(int d) const { return devices_[d].t; }

private:
    // A run of recomputations since the device's last other compute: when it started, how long
    // it is, and how much of it ran before the data of a following receive arrived (the
    // device would have waited that long without it).
    struct RecomputeRun {
        double start = 0, duration = 0, hidden = 0;
        std::size_t first = 0;  // the program index of its first R
        bool open = false;      // an R since the last other compute (zero-length ones too)
    };
    // Where a device stopped and what it carries, together, so that resuming one (a third of
    // 1F1B's instructions are a receive that waited) is a few loads from one place.
    // No two of its running sums side by side: the compiler loaded neighbours as one vector
    // and unpacked it on every instruction of the loop (8 instructions each).
    // Its place is a pointer into the program and one into the timings, not an index: the
    // loop steps two pointers, and a resumption loads them as they are.
    // Padded to a power of two in size, so that a resumption finds it with a shift (padding, not
    // alignas: an over-aligned vector's allocation cost more than the shift saved).
    struct DeviceRun {
        double t = 0;                     // its clock
        const Instruction* at = nullptr;  // its next instruction (in SimulationTables::code)
        double mem = 0;                   // its dynamic memory
        const Instruction* end = nullptr;
        double busy = 0;                       // its compute
        InstructionTiming* timing = nullptr;  // the next instruction's
        double peak = 0;              // its peak dynamic memory
        SimulationTables::MessageState* blocked = nullptr;  // the message it waits for, where at != end
        RecomputeRun recompute;
        // The summary's sums of its computations so far (SummarySums): its core(d), model FLOPs
        // and recomputed FLOPs. They fill the 128 bytes with no padding left.
        double core = 0, model = 0, recomputed = 0;
    };
    static_assert(sizeof(DeviceRun) == 128);

    // Closes the device's run before program index `end`: the run's hidden time, and each of its
    // Rs' share of it (the views shade each R by it: views/RecomputeCover.h).
    void closeRun(int d, std::size_t end) {
        RecomputeRun& run = devices_[d].recompute;
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

    // What one computation adds to the summary: its FLOPs, its time alone to core(d) (F, R, B
    // and I: sim/LowerBound.h), a forward's chain to its column and an I's mark.
    [[gnu::always_inline]] inline void addToSummary(int d, const SimulationTables::StageRow& row, const Instruction& ins,
                                                    double alone, double& core, double& model, double& recomputed) {
        const int op = int(ins.op);
        model += row.model_flops[op];
        if constexpr (kOverlap) core += op < int(Op::BackwardWeight) ? alone : 0.0;
        else core += row.core_ms[op];  // the same addition: alone is the row's duration
        if (ins.op == Op::Forward) {
            SimulationTables::SummarySums& sums = prepared_.sums;
            if (!sums.chain_set_by.empty()) {  // more than one chain: the last in device order wins
                if (sums.chain_set_by[ins.microbatch] > d) return;
                sums.chain_set_by[ins.microbatch] = d;
            }
            sums.chain_of_microbatch[ins.microbatch] = row.chain;
        } else if (ins.op == Op::BackwardInput) {
            prepared_.split[static_cast<std::size_t>(ins.stage) * prepared_.microbatches + ins.microbatch] = 1;
        } else if constexpr (kRecompute) {
            if (ins.op == Op::Recompute) recomputed += row.forward_flops;
        }
    }

    // The sums into SimulationTables::sums, a deadlocked device's unreached computations first.
    void collectSums() {
        SimulationTables::SummarySums& sums = prepared_.sums;
        sums.model_flops = sums.recompute_flops = 0;
        for (std::size_t d = 0; d < devices_.size(); ++d) {
            DeviceRun& device = devices_[d];
            const auto& program = plan_.devices[d].program;
            const std::size_t first = static_cast<std::size_t>(device.at - prepared_.code[d]);
            for (std::size_t i = first; i < program.size(); ++i) {
                const Instruction& ins = prepared_.code[d][i];
                if (unsigned(ins.op) - unsigned(Op::SendForward) < unsigned(SimulationTables::kMessageKinds)) continue;
                const SimulationTables::StageRow& row = prepared_.stages[ins.stage];
                const double alone = kOverlap ? computeMs(plan_, program, i) : row.duration[int(ins.op)];
                addToSummary(static_cast<int>(d), row, ins, alone, device.core, device.model, device.recomputed);
            }
            sums.core_ms[d] = device.core;
            sums.model_flops += device.model;
            sums.recompute_flops += device.recomputed;
        }
    }

    [[gnu::always_inline]] inline void runDevice(const int d, int* const runnable, int& runnableCount) {
        constexpr unsigned kFirstMessage = unsigned(Op::SendForward);  // routes' first kind
        constexpr int kKinds = SimulationTables::kMessageKinds;
        DeviceRun& device = devices_[d];
        const Instruction* at = device.at;
        const Instruction* const end = device.end;
        InstructionTiming* timing = device.timing;
        const SimulationTables::StageRow* const rows = prepared_.stages.data();
        const SimulationTables::MessageRoute* const routes = prepared_.routes.data();
        SimulationTables::MessageState* const messages = prepared_.messageStates.data();
        std::size_t* const touched = prepared_.touched.get();
        std::size_t touchedCount = prepared_.touchedCount;
        RecomputeRun& run = device.recompute;
        // The device's clock and running sums in registers while it runs (the same additions).
        double t = device.t, mem = device.mem, busy = device.busy, peak = device.peak;
        double core = device.core, model = device.model, recomputed = device.recomputed;  // kSummary's
        // With the curve, a point at each change, as the computation starts (F, R) or ends (B, I,
        // W). Without it every computation adds its stage row's change at once, 0 for the kinds
        // that change nothing (adding +0 leaves the sum and the peak as they were: the sum starts
        // at +0 and is never -0): one addition on the sum's chain of dependences, not one as it
        // starts and one as it ends, of which one always added 0 (issue 45).
        auto memoryChange = [&](double time, double delta) {
            mem += delta;
            peak = peak > mem ? peak : mem;  // std::max's operand order cost two copies a computation
            if constexpr (kCurve) {
                DeviceStats& stats = result_.devices[d];
                stats.memory.push_back({time, stats.static_bytes + mem});
            }
        };
        // The instruction's index, where one is asked for (rare kinds of timing and of instruction:
        // a base kept live through the loop cost the common one a register).
        auto index = [&] { return static_cast<std::size_t>(at - prepared_.code[d]); };
        // The stage's cost for the kind, through the pair's rule only when pairs overlap.
        auto timeOf = [&](const SimulationTables::StageRow& row, const Instruction& ins) {
            if constexpr (kOverlap) return computeMs(plan_, plan_.devices[d].program, index());
            return row.duration[int(ins.op)];
        };
        // A receive whose data has arrived: the device waits until it has.
        auto receive = [&](double arrived) {
            const double until = std::max(t, arrived);
            *timing = {t, until};
            t = until;
            if constexpr (kRecompute)
                if (run.duration > 0) run.hidden = std::max(run.hidden, std::clamp(arrived - run.start, 0.0, run.duration));
        };
        // Woken by the send it waited for (run() pushes a device at the start with nothing to wait
        // for): that receive is finished here rather than looked up again (a third of 1F1B's
        // receives wait, and the look-up was a sixth of a wait's cost, issue 45).
        if (device.blocked) {
            receive(device.blocked->arrival);
            ++at, ++timing;
        }
        for (; at != end; ++at, ++timing) {
            const Instruction& ins = *at;
            // Messages first (two thirds of a 1F1B program): kinds 0-3, receives odd.
            const unsigned kind = unsigned(ins.op) - kFirstMessage;
            if (kind < unsigned(kKinds)) {
                const SimulationTables::MessageRoute& route = routes[static_cast<std::size_t>(ins.stage) * kKinds + kind];
                SimulationTables::MessageState& message = route.first[ins.microbatch];
                auto slot = [&] { return static_cast<std::size_t>(&message - messages); };
                if (kind & 1) {
                    const double arrived = message.arrival;
                    if (std::isnan(arrived)) {
                        message.waiting = d;
                        device.blocked = &message;
                        break;
                    }
                    receive(arrived);
                } else {
                    *timing = {t, t};
                    message.arrival = t + route.transfer_ms;
                    if constexpr (kStretch) touched[touchedCount++] = slot();  // only rounds re-time the tables
                    const int waiter = message.waiting;
                    if (waiter >= 0) {
                        runnable[runnableCount++] = waiter;
                        message.waiting = -1;
                    }
                }
                continue;
            }
            const SimulationTables::StageRow& row = rows[ins.stage];
            const int op = int(ins.op);
            double duration = timeOf(row, ins);
            if constexpr (kSummary) addToSummary(d, row, ins, duration, core, model, recomputed);
            double change = row.memory_change[op];
            if constexpr (kRecompute)
                // Checkpointed only where the device recomputes it later.
                if (ins.op == Op::Forward &&
                    prepared_.checkpointed[static_cast<std::size_t>(ins.stage) * prepared_.microbatches + ins.microbatch])
                    change = row.checkpoint_bytes;
            if constexpr (kCurve) {
                if (ins.op == Op::Forward || ins.op == Op::Recompute) memoryChange(t, change);
            } else {
                memoryChange(t, change);
            }
            if constexpr (kStretch) {
                const double alone = duration;
                duration *= (*stretch_)[d][index()];
                result_.devices[d].contention_ms += duration - alone;
            }
            if constexpr (kRecompute) {
                if (ins.op == Op::Recompute) {
                    if (!run.open) run.first = index(), run.open = true;
                    if (run.duration == 0) run.start = t;
                    run.duration += duration;
                    result_.devices[d].recompute_ms += duration;
                } else if (run.open) {
                    closeRun(d, index());
                }
            }
            *timing = {t, t + duration};
            t += duration;
            busy += duration;
            if constexpr (kCurve)
                if (ins.op == Op::Backward || ins.op == Op::BackwardInput || ins.op == Op::BackwardWeight)
                    memoryChange(t, change);
        }
        if constexpr (kStretch) prepared_.touchedCount = touchedCount;
        device.busy = busy;
        device.peak = peak;
        device.at = at;
        device.timing = timing;
        device.t = t;
        device.mem = mem;
        if constexpr (kSummary) device.core = core, device.model = model, device.recomputed = recomputed;
    }

    const Plan& plan_;
    SimulationTables& prepared_;
    const ComputeStretch* stretch_;
    SimResult& result_;
    std::vector<DeviceRun> devices_;
    std::vector<int> runnable_;     // devices that can move, the next at the back
};

}  // namespace mario
