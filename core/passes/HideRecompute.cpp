// Hide-recompute (beyond the paper): look at each device's whole program and put every
// recomputation where it costs least. The paper's passes are local — overlap puts each R just
// ahead of its gradient's RECV, so an R is hidden only when that one wait is long enough.
// Bubbles elsewhere on the device (waiting for a forward input, the drain at the end) stay
// empty, and a device with memory to spare keeps recomputing.
//
// Two kinds of step, each keeping the plan valid and never making the step longer:
//  - drop: an R whose forward can keep its activations within the budget goes, and the F
//    stops being checkpointed. Removing work never delays anything in this execution model,
//    so a drop needs no simulation, only a memory check over the program.
//  - move: an R moves up to stand before an earlier receive that the device waited on, so it
//    runs in that bubble. Its activations then live from there to its backward, so the move
//    is checked against the budget, and kept only when a simulation says the step did not
//    grow. Moves are tried in batches (the first untried move of every device together),
//    split by bisection when a batch loses, as prepose-forward does.
// It runs twice: within the memory the plan already uses, then within the whole budget (one
// more activation set per device), whose result is kept only when it is faster still — so
// memory is spent only where it buys time. Exhaustive search on tiny plans
// (tests/core/hide_recompute_test.cpp) finds no placement of the Rs that beats it there.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "passes/BatchBisection.h"
#include "passes/Passes.h"
#include "sim/ProgramMemory.h"
#include "sim/Simulator.h"

namespace mario {
namespace {

constexpr double kSlack = 1e-9;
// Rs considered for one wait: the nearest ones after it, whose backwards come first.
constexpr std::size_t kCandidatesPerWait = 4;

class Hider {
public:
    // `timeline`: the plan's simulation as it stands (not deadlocked).
    Hider(Plan& plan, SimResult timeline, const std::vector<double>& budget, const std::atomic<bool>* cancel,
          int maxSimulations)
        : plan_(plan), budget_(budget), cancel_(cancel), maxSimulations_(maxSimulations), current_(std::move(timeline)) {}

    Result<PassReport> run() {
        PassReport report{PassId::Hide, 0, {}};
        // Moves first (they spend memory only from a bubble to the backward), then drops of
        // what is still exposed; a drop shortens the step and may open new bubbles, so again.
        for (int round = 0; round < 8 && !stopped(); ++round) {
            const std::size_t before = report.changes.size();
            while (!stopped()) {
                std::vector<Move> batch;
                for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d)
                    if (auto move = firstMove(d)) batch.push_back(*move);
                if (batch.empty()) break;
                auto apply = [&](const std::vector<Move>& moves) { return tryMoves(moves); };
                auto accepted = [&](const Move& move) {
                    report.changes.push_back({ChangeKind::Moved, move.device, move.recompute, static_cast<int>(move.from),
                                              static_cast<int>(move.to)});
                };
                auto stop = [&] { return stopped(); };
                if (auto kept = tryInBisectedBatches(batch, apply, accepted, stop); !kept) return kept.error();
            }
            if (auto dropped = dropExposed(report); !dropped) return dropped.error();
            if (report.changes.size() == before) break;
        }
        report.simulations = simulations_;
        return report;
    }

    // The simulation of the plan as the pass leaves it.
    const SimResult& timeline() const { return current_; }

private:
    struct Move {
        int device = 0;
        std::size_t from = 0;  // the R's index
        std::size_t to = 0;    // it moves to stand before program[to]
        Instruction recompute;
    };

    bool stopped() const {
        return (cancel_ && cancel_->load(std::memory_order_relaxed)) ||
               (maxSimulations_ > 0 && simulations_ >= maxSimulations_);
    }
    double budgetOf(int device) const {
        return device < static_cast<int>(budget_.size()) ? budget_[device] : std::numeric_limits<double>::infinity();
    }

    // Relax-checkpoint's drop, limited to the Rs that delay their backward in the current
    // timeline, within hide's budget.
    Result<bool> dropExposed(PassReport& report) {
        PassReport dropped = relaxCheckpoint(plan_, budget_, &current_, /*exposedOnly=*/true);
        if (!dropped.changed()) return false;
        report.changes.insert(report.changes.end(), dropped.changes.begin(), dropped.changes.end());
        auto sim = Simulator::run(plan_);
        ++simulations_;
        if (!sim) return sim.error();
        current_ = std::move(*sim);
        return true;
    }

    // The earliest receive that device d waited on and that an R later in the program could
    // fill: its F stands before the receive, and its activations fit in the budget from the
    // receive to where the R is now. Among those Rs, the first few after the receive (their
    // backwards come first). One scan of the program: O(L) per device and batch.
    std::optional<Move> firstMove(int d) {
        const auto& program = plan_.devices[d].program;
        const auto& timings = current_.devices[d].timings;
        const std::size_t n = program.size();
        std::vector<std::size_t> recomputes;  // indices of the Rs, in program order
        std::vector<std::size_t> forwardOf;   // where each R's F stands (n when nowhere before it)
        std::map<std::pair<int, int>, std::size_t> forwardAt;
        for (std::size_t i = 0; i < n; ++i) {
            const Instruction& ins = program[i];
            if (ins.op == Op::Forward) forwardAt[{ins.stage, ins.microbatch}] = i;
            if (ins.op == Op::Recompute) {
                recomputes.push_back(i);
                auto it = forwardAt.find({ins.stage, ins.microbatch});
                forwardOf.push_back(it == forwardAt.end() ? n : it->second);
            }
        }
        std::vector<double> prefix;  // computed on demand
        const double room = budgetOf(d) - staticBytesOf(plan_, d) + kSlack;
        std::size_t next = 0;  // first R after the receive
        for (std::size_t k = 0; k < n; ++k) {
            if (!isRecv(program[k].op) || timings[k].end <= timings[k].start + kSlack) continue;
            // The run of receives that k belongs to: an R goes before the first of them.
            std::size_t at = k;
            while (at > 0 && isRecv(program[at - 1].op)) --at;
            while (next < recomputes.size() && recomputes[next] < k) ++next;
            for (std::size_t c = next; c < recomputes.size() && c < next + kCandidatesPerWait; ++c) {
                const std::size_t r = recomputes[c];
                const Instruction& ins = program[r];
                if (forwardOf[c] >= at) continue;
                if (!tried_.insert({d, ins.stage, ins.microbatch, static_cast<int>(at)}).second) continue;
                if (prefix.empty()) prefix = memoryLevels(plan_, program);
                const StageCost& cost = plan_.stages[ins.stage].cost;
                const double extra = cost.activation_bytes - cost.checkpoint_bytes;
                if (*std::max_element(prefix.begin() + at, prefix.begin() + r) + extra > room) continue;
                return Move{d, r, at, ins};
            }
        }
        return std::nullopt;
    }

    // Moves never cost memory beyond the budget (checked when chosen), so only time decides.
    Result<bool> tryMoves(const std::vector<Move>& moves) {
        for (const Move& move : moves) {
            auto& program = plan_.devices[move.device].program;
            std::rotate(program.begin() + move.to, program.begin() + move.from, program.begin() + move.from + 1);
        }
        auto sim = Simulator::run(plan_);
        ++simulations_;
        if (!sim) return sim.error();
        if (sim->deadlocked || sim->makespan_ms > current_.makespan_ms + kSlack) {
            for (const Move& move : moves) {
                auto& program = plan_.devices[move.device].program;
                std::rotate(program.begin() + move.to, program.begin() + move.to + 1, program.begin() + move.from + 1);
            }
            return false;
        }
        current_ = std::move(*sim);
        return true;
    }

    Plan& plan_;
    const std::vector<double>& budget_;
    const std::atomic<bool>* cancel_;
    int maxSimulations_;
    int simulations_ = 0;
    SimResult current_;
    std::set<std::tuple<int, int, int, int>> tried_;
};

}  // namespace

Result<PassReport> hideRecompute(Plan& plan, const std::vector<double>& budget, const std::atomic<bool>* cancel,
                                 int maxSimulations) {
    // Memory is spent only where it buys time: first within what the plan already uses, then
    // within the whole budget, whose result is kept only when it is faster still.
    auto input = Simulator::run(plan);
    if (!input) return input.error();
    if (input->deadlocked) return PassReport{PassId::Hide, 0, {}};
    std::vector<double> frugal;
    for (std::size_t d = 0; d < input->devices.size(); ++d)
        frugal.push_back(std::min(input->devices[d].peak_bytes, d < budget.size() ? budget[d] : input->devices[d].peak_bytes));
    Hider first(plan, std::move(*input), frugal, cancel, maxSimulations);
    auto report = first.run();
    if (!report) return report;
    Plan wider = plan;
    const int left = maxSimulations > 0 ? std::max(1, maxSimulations - report->simulations) : 0;
    Hider second(wider, first.timeline(), budget, cancel, left);
    auto widerReport = second.run();
    if (!widerReport) return widerReport;
    report->simulations += widerReport->simulations;
    if (second.timeline().makespan_ms < first.timeline().makespan_ms - kSlack) {
        plan = std::move(wider);
        report->changes.insert(report->changes.end(), widerReport->changes.begin(), widerReport->changes.end());
    }
    return report;
}

}  // namespace mario
