// Pass 4, prepose-forward (paper §5.1): reshape bubbles by running a checkpointed forward
// early, kept only when the moves together shorten the step. Its SEND moves with it: sends are non-blocking in our execution model, so an early
// send can only make the receiver's data arrive earlier and cannot deadlock.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/passes/BatchBisection.h"
#include "core/passes/Passes.h"
#include "core/passes/TriedMoves.h"
#include "core/schedule/PipelineTopology.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

constexpr double kSlack = 1e-9;
constexpr double kMinFill = 0.25;

class Preposer {
public:
    Preposer(Plan& plan, const PipelineTopology& topology, const std::vector<double>& caps,
             const std::atomic<bool>* cancel, int maxSimulations, long long maxEvaluations)
        : plan_(plan), topology_(topology), caps_(caps), cancel_(cancel), budget_(maxSimulations),
          evaluationBudget_(maxEvaluations), microbatches_(std::max(1, plan.microbatchCount())) {}

    Result<PassReport> run() {
        PassReport report{PassId::Prepose, 0, {}};
        auto sim = Simulator::run(plan_, SimOptions::timelineOnly());
        if (!sim) return sim.error();
        if (sim->deadlocked) return report;  // nothing to improve on a plan that cannot run
        auto timeline = IncrementalTimeline::build(plan_);
        if (!timeline) return timeline.error();
        current_.emplace(std::move(*timeline));
        for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d) {
            levels_.push_back(memoryLevels(plan_, plan_.devices[d].program));
            statics_.push_back(sim->devices[d].static_bytes);
            peaks_.push_back(sim->devices[d].peak_dynamic_bytes);
        }
        // Each batch takes the first untried move of every device (passes/BatchBisection.h).
        // Every batch leaves a valid plan, so a cancel between batches is always safe. The index
        // is built once and follows the kept moves (the pass moves no R, so what is checkpointed
        // stays; a send's place changes only inside a moved range).
        indexPlan();
        scans_.assign(plan_.devices.size(), ScanState{});
        const std::vector<DeviceProgram> original = plan_.devices;
        const double start = current_->makespan();
        while (!(cancel_ && cancel_->load(std::memory_order_relaxed)) && !outOfBudget()) {
            std::vector<Move> batch;
            for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d)
                if (auto move = firstMove(d)) batch.push_back(*move);
            if (batch.empty()) break;
            auto kept = tryBatch(batch, report);
            if (!kept) return kept.error();
            if (*kept) keepValidScans();
        }
        // A moved forward holds its input longer: worth it only for a shorter step. Moves that
        // together shorten nothing are all undone, so the pass never adds memory for no time
        // (GPT-3 1.6B interleaved on 8 devices: 6.95 → 7.40 GB at an unchanged step before).
        if (report.changed() && current_->makespan() >= start - kSlack) {
            plan_.devices = original;
            report.changes.clear();
        }
        report.simulations = simulations_;
        report.evaluations = static_cast<long long>(current_->evaluations());
        return report;
    }

private:
    struct Move {
        int device = 0;
        Instruction forward;
        std::size_t g0 = 0, g1 = 0;  // the group [RECV_F] F [SEND_F]
        std::size_t target = 0;      // it moves to stand before program[target]
        std::size_t forwardIndex = 0;
    };

    void record(PassReport& report, const Move& move) {
        report.changes.push_back({ChangeKind::Moved, move.device, move.forward, static_cast<int>(move.forwardIndex),
                                  static_cast<int>(move.target + (move.forwardIndex - move.g0))});
    }

    bool outOfBudget() const {
        return (budget_ > 0 && simulations_ >= budget_) ||
               (evaluationBudget_ > 0 && static_cast<long long>(current_->evaluations()) >= evaluationBudget_);
    }

    Result<bool> tryBatch(const std::vector<Move>& batch, PassReport& report) {
        auto apply = [&](const std::vector<Move>& moves) { return tryMoves(moves); };
        auto accepted = [&](const Move& move) { record(report, move); };
        auto stopped = [&] { return outOfBudget(); };
        return tryInBisectedBatches(batch, apply, accepted, stopped);
    }

    // The first untried move of device `d`, in one scan of its program: it tracks where each
    // stage's latest forward (or its receive) stands, where each forward stands (for the next
    // stage on this device), and the receives the device waited on — O(L log L), since huge
    // plans have thousands of instructions per device.
    //
    // A scan resumes where the device's last one stopped while what it read there is unchanged
    // (keepValidScans): every forward before that place then gives the same target as before,
    // each one already tried (else the scan would have stopped there), so the first untried
    // move is the same as a scan from the start would find. Restarting every scan before every
    // batch was 133 M of the pass's 311 M instructions on LLaMA-2 13B interleaved 16 × 64.
    std::optional<Move> firstMove(int d) {
        const auto& program = plan_.devices[d].program;
        const auto& timings = current_->timings(d);
        ScanState& state = scans_[d];
        if (!state.valid) {
            // Dense tables, not hash maps: this scan runs for every device before every batch.
            state.stageBound.assign(static_cast<std::size_t>(topology_.stageCount()), 0);  // stage → first allowed index
            state.beforeOwnRecv.assign(state.stageBound.size(), 0);
            state.waits.clear();
            state.receives.clear();
            state.arrivals.clear();
            state.next = 0;
            state.stamp = ++scan_;  // forwardAt_ entries of earlier scans are stale
            state.valid = true;
        }
        forwardAt_.resize(checkpointed_.size());
        // A stage runs on one device only, so no other device's scan writes this one's cells.
        const std::uint64_t stamp = state.stamp;
        auto& stageBound = state.stageBound;
        auto& beforeOwnRecv = state.beforeOwnRecv;
        auto cell = [&](int stage, int mb) { return static_cast<std::size_t>(stage) * microbatches_ + mb; };
        auto& waits = state.waits;
        for (std::size_t& j = state.next; j < program.size(); ++j) {
            const Instruction& ins = program[j];
            if (ins.op == Op::RecvForward) {
                beforeOwnRecv[ins.stage] = stageBound[ins.stage];
                stageBound[ins.stage] = j + 1;
            }
            if (ins.op == Op::Forward) {
                const int s = ins.stage, m = ins.microbatch;
                if (isCheckpointed(s, m) && !ins.overlapped) {  // a pair moves only as a whole
                    Move move{d, ins, j, j + 1, j, j};
                    const bool ownRecv = j > 0 && program[j - 1] == Instruction{Op::RecvForward, s, m};
                    if (ownRecv) --move.g0;
                    if (move.g1 < program.size() && program[move.g1] == Instruction{Op::SendForward, s, m}) ++move.g1;
                    // It may not pass an earlier forward of its stage (keeps receive order) nor
                    // the forward of the previous stage when that runs on the same device.
                    std::size_t lo = ownRecv ? beforeOwnRecv[s] : stageBound[s];
                    const int previous = topology_.previousStage(s);
                    if (previous >= 0 && forwardAt_[cell(previous, m)].scan == stamp)
                        lo = std::max(lo, forwardAt_[cell(previous, m)].index + 1);
                    const double arrival = inputArrival(ins);
                    if (auto target = bubbleFor(ins, arrival, timings, waits, lo, move.g0)) {
                        move.target = *target;
                        // Nothing of the forward at j is recorded yet: the next scan resumes at j.
                        if (tried_.insert(d, s, m, static_cast<int>(move.target))) return move;
                    }
                    state.arrivals.push_back({j, arrival, 0});
                }
                forwardAt_[cell(s, m)] = {stamp, j};
                stageBound[s] = j + 1;
            }
            if (isRecv(ins.op)) {
                state.receives.push_back({j, timings[j].start, timings[j].end});
                if (timings[j].end > timings[j].start + kSlack) waits.push_back(j);
            }
        }
        return std::nullopt;
    }

    // The earliest receive in [lo, end) that the device waited on, whose wait the forward can
    // usefully fill: its input arrives before the waited-for data, and the room holds at
    // least a quarter of the forward (slivers left by uneven stage costs cost a simulation
    // each and rarely shorten the step: GPT-3 13B Chimera 32×64, 84 → 28 ms for the pass,
    // step 4031 → 4047 ms).
    std::optional<std::size_t> bubbleFor(const Instruction& forward, double arrival,
                                         const InstructionTimings& timings,
                                         const std::vector<std::size_t>& waits, std::size_t lo, std::size_t end) const {
        const double needed = kMinFill * plan_.stages[forward.stage].cost.forward_ms - kSlack;
        for (auto it = std::lower_bound(waits.begin(), waits.end(), lo); it != waits.end() && *it < end; ++it) {
            const InstructionTiming& t = timings[*it];
            if (arrival + kSlack < t.end && t.end - std::max(arrival, t.start) >= needed) return *it;
        }
        return std::nullopt;
    }

    bool isCheckpointed(int stage, int mb) const {
        return checkpointed_[static_cast<std::size_t>(stage) * microbatches_ + mb] != 0;
    }

    // Applies the moves (at most one per device; moves on one device never overlap in a batch),
    // follows them on the incremental timeline, and keeps them when the makespan does not grow,
    // nothing deadlocks and every moved device stays within its cap. A trial re-times about a
    // tenth of the plan where a whole simulation re-timed all of it (GPT-3 13B Chimera 32×64).
    // Moving a forward with its receive earlier can deadlock the plan; every cycle it could
    // close runs through the moved forward, so one of positive length makes the times grow
    // round it until the timeline gives up or falls back to a whole simulation. A forward of
    // zero length could close a cycle of zero length: those batches are simulated whole.
    Result<bool> tryMoves(const std::vector<Move>& moves) {
        const double before = current_->makespan();
        bool whole = false;
        for (const Move& move : moves) {
            auto& program = plan_.devices[move.device].program;
            std::rotate(program.begin() + move.target, program.begin() + move.g0, program.begin() + move.g1);
            current_->moved(plan_, move.device, move.g0, move.target, move.g1 - move.g0);
            whole = whole || plan_.stages[move.forward.stage].cost.forward_ms <= 0;
        }
        auto updated = current_->update(plan_, before + kSlack, whole);
        ++simulations_;
        if (!updated) return updated.error();
        bool keep = *updated && current_->makespan() <= before + kSlack;
        std::vector<double> peaks;
        for (const Move& move : moves) {
            peaks.push_back(peakAfter(move));
            const double cap = move.device < static_cast<int>(caps_.size()) ? caps_[move.device]
                                                                            : std::numeric_limits<double>::infinity();
            keep = keep && peaks.back() <= cap + kSlack;
        }
        if (!keep) {
            for (auto it = moves.rbegin(); it != moves.rend(); ++it) {
                auto& program = plan_.devices[it->device].program;
                std::rotate(program.begin() + it->target, program.begin() + it->target + (it->g1 - it->g0),
                            program.begin() + it->g1);
            }
            current_->undo(plan_);
            return false;
        }
        for (std::size_t i = 0; i < moves.size(); ++i) {
            const Move& move = moves[i];
            auto& changedFrom = scans_[move.device].changedFrom;  // its program changed from the target on
            changedFrom = std::min(changedFrom, move.target);
            auto& levels = levels_[move.device];
            const double added = forwardBytes(move.forward);
            for (std::size_t k = move.target; k < move.g0; ++k) levels[k] += added;
            std::rotate(levels.begin() + move.target, levels.begin() + move.g0, levels.begin() + move.g1);
            // The group's own levels: what stood before it, plus the forward's activations.
            double level = move.target > 0 ? levels[move.target - 1] : 0.0;
            for (std::size_t k = move.target; k < move.target + (move.g1 - move.g0); ++k) {
                if (plan_.devices[move.device].program[k].op == Op::Forward) level += added;
                levels[k] = level;
            }
            peaks_[move.device] = peaks[i] - statics_[move.device];
            const auto& program = plan_.devices[move.device].program;
            for (std::size_t k = move.target; k < move.g1; ++k)
                if (program[k].op == Op::SendForward)
                    sendAt_[static_cast<std::size_t>(program[k].stage) * microbatches_ + program[k].microbatch] =
                        static_cast<int>(k);
        }
        return true;
    }

    // After kept moves: a device's scan keeps what it read before the first place where that
    // changed, to the bit — its program (a kept move of its own changed it from its target),
    // the times of a receive, or the input arrival of a forward it looked at. The targets it
    // found before there are then the same, so the scan goes back only to there.
    void keepValidScans() {
        for (std::size_t d = 0; d < scans_.size(); ++d) {
            ScanState& state = scans_[d];
            std::size_t from = std::min(state.changedFrom, state.next);
            state.changedFrom = std::numeric_limits<std::size_t>::max();
            if (!state.valid) continue;
            const auto& timings = current_->timings(static_cast<int>(d));
            const auto& program = plan_.devices[d].program;
            for (const Seen& seen : state.receives) {
                if (seen.index >= from) break;
                if (timings[seen.index].start != seen.a || timings[seen.index].end != seen.b) {
                    from = seen.index;
                    break;
                }
            }
            for (const Seen& seen : state.arrivals) {
                if (seen.index >= from) break;
                if (inputArrival(program[seen.index]) != seen.a) {
                    from = seen.index;
                    break;
                }
            }
            if (from < state.next) rewind(static_cast<int>(d), from);
        }
    }

    // Puts device d's scan back to stand before program[from]: what it read before stays, its
    // tables are rebuilt from the program alone (the cheap part of a scan).
    void rewind(int d, std::size_t from) {
        ScanState& state = scans_[d];
        auto before = [from](const Seen& seen) { return seen.index < from; };
        state.receives.erase(std::partition_point(state.receives.begin(), state.receives.end(), before),
                             state.receives.end());
        state.arrivals.erase(std::partition_point(state.arrivals.begin(), state.arrivals.end(), before),
                             state.arrivals.end());
        state.waits.erase(std::lower_bound(state.waits.begin(), state.waits.end(), from), state.waits.end());
        std::fill(state.stageBound.begin(), state.stageBound.end(), 0);
        std::fill(state.beforeOwnRecv.begin(), state.beforeOwnRecv.end(), 0);
        state.stamp = ++scan_;
        const auto& program = plan_.devices[d].program;
        for (std::size_t j = 0; j < from; ++j) {
            const Instruction& ins = program[j];
            if (ins.op == Op::RecvForward) {
                state.beforeOwnRecv[ins.stage] = state.stageBound[ins.stage];
                state.stageBound[ins.stage] = j + 1;
            }
            if (ins.op == Op::Forward) {
                forwardAt_[static_cast<std::size_t>(ins.stage) * microbatches_ + ins.microbatch] = {state.stamp, j};
                state.stageBound[ins.stage] = j + 1;
            }
        }
        state.next = from;
    }

    // What a checkpointed forward keeps (its R restores the rest later).
    double forwardBytes(const Instruction& forward) const { return plan_.stages[forward.stage].cost.checkpoint_bytes; }

    // The device's peak with the move made: memory depends on program order only
    // (sim/ProgramMemory.h), and the forward's bytes now live from the target to where it stood.
    double peakAfter(const Move& move) const {
        const auto& levels = levels_[move.device];
        const double added = forwardBytes(move.forward);
        double peak = std::max(peaks_[move.device], (move.target > 0 ? levels[move.target - 1] : 0.0) + added);
        for (std::size_t k = move.target; k < move.g0; ++k) peak = std::max(peak, levels[k] + added);
        return statics_[move.device] + peak;
    }

    void indexPlan() {
        checkpointed_.assign(static_cast<std::size_t>(topology_.stageCount()) * microbatches_, 0);
        sendAt_.assign(static_cast<std::size_t>(topology_.stageCount()) * microbatches_, -1);
        for (const auto& device : plan_.devices)
            for (std::size_t i = 0; i < device.program.size(); ++i) {
                const Instruction& ins = device.program[i];
                if (ins.op == Op::Recompute)
                    checkpointed_[static_cast<std::size_t>(ins.stage) * microbatches_ + ins.microbatch] = 1;
                if (ins.op == Op::SendForward)
                    sendAt_[static_cast<std::size_t>(ins.stage) * microbatches_ + ins.microbatch] = static_cast<int>(i);
            }
    }

    // When the input of F(stage, mb) arrives on its device (0 when it is local).
    double inputArrival(const Instruction& forward) const {
        const int previous = topology_.previousStage(forward.stage);
        if (previous < 0 || topology_.deviceOf(previous) == topology_.deviceOf(forward.stage)) return 0;
        const int at = sendAt_[static_cast<std::size_t>(previous) * microbatches_ + forward.microbatch];
        if (at < 0) return std::numeric_limits<double>::infinity();
        const double issued = current_->timings(topology_.deviceOf(previous))[at].start;
        return issued + plan_.link.transferMs(plan_.stages[previous].cost.send_bytes);
    }

    Plan& plan_;
    const PipelineTopology& topology_;
    const std::vector<double>& caps_;
    const std::atomic<bool>* cancel_;
    int budget_;
    long long evaluationBudget_;
    int simulations_ = 0;
    int microbatches_;
    std::optional<IncrementalTimeline> current_;
    std::vector<std::vector<double>> levels_;  // per device: memoryLevels of its program, kept up to date
    std::vector<double> statics_;              // per device: static bytes
    std::vector<double> peaks_;                // per device: the dynamic peak (0 or above), as the simulator has it
    std::vector<std::uint8_t> checkpointed_;
    // firstMove's tables, kept between scans: per stage, and per (stage, micro-batch) the index of
    // its forward on its device, valid when stamped with that device's current scan.
    struct ForwardAt {
        std::uint64_t scan = 0;
        std::size_t index = 0;
    };
    // What a scan read at program[index]: a receive's start and end, or a forward's arrival.
    struct Seen {
        std::size_t index = 0;
        double a = 0, b = 0;
    };
    // Per device, where its scan stands: the next index to visit and the tables up to it.
    struct ScanState {
        bool valid = false;
        std::size_t next = 0;
        std::uint64_t stamp = 0;
        std::size_t changedFrom = std::numeric_limits<std::size_t>::max();  // a kept move's target
        std::vector<std::size_t> stageBound, beforeOwnRecv, waits;
        std::vector<Seen> receives;  // before `next`: each receive's start and end
        std::vector<Seen> arrivals;  // before `next`: each movable forward's input arrival
    };
    std::vector<ScanState> scans_;
    std::vector<ForwardAt> forwardAt_;
    std::uint64_t scan_ = 0;
    std::vector<int> sendAt_;
    TriedMoves tried_;  // (device, stage, micro-batch, target)
};

}  // namespace

Result<PassReport> preposeForward(Plan& plan, const std::vector<double>& memoryCaps, const std::atomic<bool>* cancel,
                                  int maxSimulations, long long maxEvaluations) {
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    return Preposer(plan, *topology, memoryCaps, cancel, maxSimulations, maxEvaluations).run();
}

}  // namespace mario
