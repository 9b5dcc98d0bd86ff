// Pass 4, prepose-forward (paper §5.1): reshape bubbles by running a checkpointed forward
// early. Its SEND moves with it: sends are non-blocking in our execution model, so an early
// send can only make the receiver's data arrive earlier and cannot deadlock.
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include "passes/Passes.h"
#include "schedule/PipelineTopology.h"
#include "sim/Simulator.h"

namespace mario {
namespace {

constexpr double kSlack = 1e-9;
constexpr double kMinFill = 0.25;

class Preposer {
public:
    Preposer(Plan& plan, const PipelineTopology& topology, const std::vector<double>& caps)
        : plan_(plan), topology_(topology), caps_(caps), microbatches_(std::max(1, plan.microbatchCount())) {}

    Result<PassReport> run() {
        PassReport report{PassId::Prepose, 0, {}};
        auto sim = Simulator::run(plan_);
        if (!sim) return sim.error();
        if (sim->deadlocked) return report;  // nothing to improve on a plan that cannot run
        current_ = std::move(*sim);
        // Each batch takes the first untried move of every device and simulates them together;
        // only when the batch as a whole would lose time or memory are its moves tried one by
        // one by bisection. Moves on different devices rarely interfere, so this needs far
        // fewer simulations than trying every move alone.
        for (;;) {
            indexPlan();
            std::vector<Move> batch;
            for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d)
                if (auto move = firstMove(d)) batch.push_back(*move);
            if (batch.empty()) break;
            auto kept = tryBatch(batch, report);
            if (!kept) return kept.error();
        }
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

    // Keeps the whole batch if it passes, else splits it in halves and tries each.
    Result<bool> tryBatch(const std::vector<Move>& batch, PassReport& report) {
        auto accepted = tryMoves(batch);
        if (!accepted) return accepted.error();
        if (*accepted) {
            for (const Move& move : batch) record(report, move);
            return true;
        }
        if (batch.size() == 1) return false;
        const auto middle = batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2);
        auto first = tryBatch(std::vector<Move>(batch.begin(), middle), report);
        if (!first) return first.error();
        auto second = tryBatch(std::vector<Move>(middle, batch.end()), report);
        if (!second) return second.error();
        return *first || *second;
    }

    std::optional<Move> firstMove(int d) {
        const auto& program = plan_.devices[d].program;
        for (std::size_t j = 0; j < program.size(); ++j) {
            const Instruction& ins = program[j];
            if (ins.op != Op::Forward || !checkpointed_.count({ins.stage, ins.microbatch})) continue;
            auto move = findMove(d, j);
            if (move && tried_.insert({d, ins.stage, ins.microbatch, static_cast<int>(move->target)}).second) return move;
        }
        return std::nullopt;
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
        auto sim = Simulator::run(plan_);
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
        checkpointed_.clear();
        sendAt_.assign(static_cast<std::size_t>(topology_.stageCount()) * microbatches_, -1);
        for (const auto& device : plan_.devices)
            for (std::size_t i = 0; i < device.program.size(); ++i) {
                const Instruction& ins = device.program[i];
                if (ins.op == Op::Recompute) checkpointed_.insert({ins.stage, ins.microbatch});
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

    // The earliest bubble that the group around program[j] can usefully fill: a receive the
    // device waited on, whose data arrives after the forward's own input.
    std::optional<Move> findMove(int d, std::size_t j) const {
        const auto& program = plan_.devices[d].program;
        const Instruction forward = program[j];
        const int s = forward.stage, m = forward.microbatch;
        Move move{d, forward, j, j + 1, j, j};
        if (move.g0 > 0 && program[move.g0 - 1] == Instruction{Op::RecvForward, s, m}) --move.g0;
        if (move.g1 < program.size() && program[move.g1] == Instruction{Op::SendForward, s, m}) ++move.g1;

        // It may not pass an earlier forward of its stage (keeps receive order) nor the
        // forward of the previous stage when that runs on the same device.
        const int previous = topology_.previousStage(s);
        std::size_t lo = 0;
        for (std::size_t q = 0; q < move.g0; ++q) {
            const Instruction& other = program[q];
            const bool sameStage = other.stage == s && (other.op == Op::Forward || other.op == Op::RecvForward);
            const bool feedsIt = other.op == Op::Forward && other.stage == previous && other.microbatch == m;
            if (sameStage || feedsIt) lo = q + 1;
        }
        const double arrival = inputArrival(forward);
        const auto& timings = current_.devices[d].timings;
        for (std::size_t q = lo; q < move.g0; ++q) {
            const bool waits = isRecv(program[q].op) && timings[q].end > timings[q].start + kSlack;
            // A bubble worth filling holds at least a quarter of the forward: slivers left by
            // uneven stage costs cost a simulation each and rarely shorten the step (GPT-3 13B
            // Chimera 32×64: 84 → 28 ms for the pass, step 4031 → 4047 ms).
            const double room = timings[q].end - std::max(arrival, timings[q].start);
            if (waits && room >= kMinFill * plan_.stages[s].cost.forward_ms - kSlack && arrival + kSlack < timings[q].end) {
                move.target = q;
                return move;
            }
        }
        return std::nullopt;
    }

    Plan& plan_;
    const PipelineTopology& topology_;
    const std::vector<double>& caps_;
    int microbatches_;
    SimResult current_;
    std::set<std::pair<int, int>> checkpointed_;
    std::vector<int> sendAt_;
    std::set<std::tuple<int, int, int, int>> tried_;
};

}  // namespace

Result<PassReport> preposeForward(Plan& plan, const std::vector<double>& memoryCaps) {
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    return Preposer(plan, *topology, memoryCaps).run();
}

}  // namespace mario
