// Pass 4, prepose-forward (paper §5.1): reshape bubbles by running a checkpointed forward
// early. Its SEND moves with it: sends are non-blocking in our execution model, so an early
// send can only make the receiver's data arrive earlier and cannot deadlock.
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "passes/Passes.h"
#include "schedule/PipelineTopology.h"
#include "sim/Simulator.h"

namespace mario {
namespace {

constexpr double kSlack = 1e-9;

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
        indexPlan();
        for (std::size_t d = 0; d < plan_.devices.size(); ++d) {
            for (std::size_t j = 0; j < plan_.devices[d].program.size(); ++j) {
                const Instruction ins = plan_.devices[d].program[j];
                if (ins.op != Op::Forward || !checkpointed_.count({ins.stage, ins.microbatch})) continue;
                auto moved = tryMove(static_cast<int>(d), j);
                if (!moved) return moved.error();
                if (*moved >= 0) {
                    report.changes.push_back({ChangeKind::Moved, static_cast<int>(d), ins, static_cast<int>(j), *moved});
                    indexPlan();
                }
            }
        }
        return report;
    }

private:
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

    // Moves the group around program[j] into the earliest useful bubble; returns the new
    // index of the F, or -1 when it stays.
    Result<int> tryMove(int d, std::size_t j) {
        auto& program = plan_.devices[d].program;
        const Instruction forward = program[j];
        const int s = forward.stage, m = forward.microbatch;
        std::size_t g0 = j, g1 = j + 1;
        if (g0 > 0 && program[g0 - 1] == Instruction{Op::RecvForward, s, m}) --g0;
        if (g1 < program.size() && program[g1] == Instruction{Op::SendForward, s, m}) ++g1;

        // It may not pass an earlier forward of its stage (keeps receive order) nor the
        // forward of the previous stage when that runs on the same device.
        const int previous = topology_.previousStage(s);
        std::size_t lo = 0;
        for (std::size_t q = 0; q < g0; ++q) {
            const Instruction& other = program[q];
            const bool sameStage = other.stage == s && (other.op == Op::Forward || other.op == Op::RecvForward);
            const bool feedsIt = other.op == Op::Forward && other.stage == previous && other.microbatch == m;
            if (sameStage || feedsIt) lo = q + 1;
        }
        const double arrival = inputArrival(forward);
        const auto& timings = current_.devices[d].timings;
        std::size_t target = g0;
        for (std::size_t q = lo; q < g0; ++q) {
            const bool waits = isRecv(program[q].op) && timings[q].end > timings[q].start + kSlack;
            if (waits && arrival + kSlack < timings[q].end) {
                target = q;
                break;
            }
        }
        if (target == g0 || tried_.count({d, s, m, static_cast<int>(target)})) return -1;
        tried_.insert({d, s, m, static_cast<int>(target)});

        std::vector<Instruction> candidate;
        candidate.reserve(program.size());
        candidate.insert(candidate.end(), program.begin(), program.begin() + target);
        candidate.insert(candidate.end(), program.begin() + g0, program.begin() + g1);
        candidate.insert(candidate.end(), program.begin() + target, program.begin() + g0);
        candidate.insert(candidate.end(), program.begin() + g1, program.end());
        std::swap(program, candidate);
        auto sim = Simulator::run(plan_);
        if (!sim) return sim.error();
        const double cap = d < static_cast<int>(caps_.size()) ? caps_[d] : std::numeric_limits<double>::infinity();
        const bool keep = !sim->deadlocked && sim->makespan_ms <= current_.makespan_ms + kSlack &&
                          sim->devices[d].peak_bytes <= cap + kSlack;
        if (!keep) {
            std::swap(program, candidate);
            return -1;
        }
        current_ = std::move(*sim);
        return static_cast<int>(target + (j - g0));
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
