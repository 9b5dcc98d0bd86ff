// Pass 4, prepose-forward (paper §5.1): reshape bubbles by running a checkpointed forward
// early. Its SEND moves with it: sends are non-blocking in our execution model, so an early
// send can only make the receiver's data arrive earlier and cannot deadlock.
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/passes/BatchBisection.h"
#include "core/passes/Passes.h"
#include "core/schedule/PipelineTopology.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

constexpr double kSlack = 1e-9;
constexpr double kMinFill = 0.25;

class Preposer {
public:
    Preposer(Plan& plan, const PipelineTopology& topology, const std::vector<double>& caps,
             const std::atomic<bool>* cancel, int maxSimulations)
        : plan_(plan), topology_(topology), caps_(caps), cancel_(cancel), budget_(maxSimulations),
          microbatches_(std::max(1, plan.microbatchCount())) {}

    Result<PassReport> run() {
        PassReport report{PassId::Prepose, 0, {}};
        auto sim = Simulator::run(plan_, SimOptions::timelineOnly());
        if (!sim) return sim.error();
        if (sim->deadlocked) return report;  // nothing to improve on a plan that cannot run
        current_ = std::move(*sim);
        // Each batch takes the first untried move of every device (passes/BatchBisection.h).
        // Every batch leaves a valid plan, so a cancel between batches is always safe.
        while (!(cancel_ && cancel_->load(std::memory_order_relaxed)) && !outOfBudget()) {
            indexPlan();
            std::vector<Move> batch;
            for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d)
                if (auto move = firstMove(d)) batch.push_back(*move);
            if (batch.empty()) break;
            auto kept = tryBatch(batch, report);
            if (!kept) return kept.error();
        }
        report.simulations = simulations_;
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

    bool outOfBudget() const { return budget_ > 0 && simulations_ >= budget_; }

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
    std::optional<Move> firstMove(int d) {
        const auto& program = plan_.devices[d].program;
        const auto& timings = current_.devices[d].timings;
        std::unordered_map<int, std::size_t> stageBound, beforeOwnRecv;  // stage → first allowed index
        std::unordered_map<std::int64_t, std::size_t> forwardAt;
        std::vector<std::size_t> waits;
        auto key = [](int stage, int mb) {
            return (static_cast<std::int64_t>(stage) << 32) | static_cast<std::uint32_t>(mb);
        };
        for (std::size_t j = 0; j < program.size(); ++j) {
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
                    if (auto it = forwardAt.find(key(previous, m)); previous >= 0 && it != forwardAt.end())
                        lo = std::max(lo, it->second + 1);
                    if (auto target = bubbleFor(ins, timings, waits, lo, move.g0)) {
                        move.target = *target;
                        if (tried_.insert({d, s, m, static_cast<int>(move.target)}).second) return move;
                    }
                }
                forwardAt[key(s, m)] = j;
                stageBound[s] = j + 1;
            }
            if (isRecv(ins.op) && timings[j].end > timings[j].start + kSlack) waits.push_back(j);
        }
        return std::nullopt;
    }

    // The earliest receive in [lo, end) that the device waited on, whose wait the forward can
    // usefully fill: its input arrives before the waited-for data, and the room holds at
    // least a quarter of the forward (slivers left by uneven stage costs cost a simulation
    // each and rarely shorten the step: GPT-3 13B Chimera 32×64, 84 → 28 ms for the pass,
    // step 4031 → 4047 ms).
    std::optional<std::size_t> bubbleFor(const Instruction& forward, const std::vector<InstructionTiming>& timings,
                                         const std::vector<std::size_t>& waits, std::size_t lo, std::size_t end) const {
        const double arrival = inputArrival(forward);
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

    // Applies the moves (at most one per device; moves on one device never overlap in a batch), simulates, and keeps them when the
    // makespan does not grow, nothing deadlocks and every moved device stays within its cap.
    Result<bool> tryMoves(const std::vector<Move>& moves) {
        std::vector<std::vector<Instruction>> saved;
        for (const Move& move : moves) {
            auto& program = plan_.devices[move.device].program;
            saved.push_back(program);
            std::vector<Instruction> moved;
            moved.reserve(program.size());
            moved.insert(moved.end(), program.begin(), program.begin() + move.target);
            moved.insert(moved.end(), program.begin() + move.g0, program.begin() + move.g1);
            moved.insert(moved.end(), program.begin() + move.target, program.begin() + move.g0);
            moved.insert(moved.end(), program.begin() + move.g1, program.end());
            program = std::move(moved);
        }
        auto sim = Simulator::run(plan_, SimOptions::timelineOnly());
        ++simulations_;
        if (!sim) return sim.error();
        bool keep = !sim->deadlocked && sim->makespan_ms <= current_.makespan_ms + kSlack;
        for (const Move& move : moves) {
            const double cap = move.device < static_cast<int>(caps_.size()) ? caps_[move.device]
                                                                            : std::numeric_limits<double>::infinity();
            keep = keep && sim->devices[move.device].peak_bytes <= cap + kSlack;
        }
        if (!keep) {
            for (std::size_t i = 0; i < moves.size(); ++i) plan_.devices[moves[i].device].program = std::move(saved[i]);
            return false;
        }
        current_ = std::move(*sim);
        return true;
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
        const double issued = current_.devices[topology_.deviceOf(previous)].timings[at].start;
        return issued + plan_.link.transferMs(plan_.stages[previous].cost.send_bytes);
    }

    Plan& plan_;
    const PipelineTopology& topology_;
    const std::vector<double>& caps_;
    const std::atomic<bool>* cancel_;
    int budget_;
    int simulations_ = 0;
    int microbatches_;
    SimResult current_;
    std::vector<std::uint8_t> checkpointed_;
    std::vector<int> sendAt_;
    std::set<std::tuple<int, int, int, int>> tried_;
};

}  // namespace

Result<PassReport> preposeForward(Plan& plan, const std::vector<double>& memoryCaps, const std::atomic<bool>* cancel,
                                  int maxSimulations) {
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    return Preposer(plan, *topology, memoryCaps, cancel, maxSimulations).run();
}

}  // namespace mario
