// Branch-and-bound over schedules. A node appends one compute operation (with, for an F, the
// choice of keeping its activations or checkpointing it) to its device's order; its start is
// max(device free, every input's end plus transfer), which is what the simulator computes for
// the plan planFromComputeOrder writes. Every deadlock-free set of orders is reached this way
// (append its operations in any topological order), so the search is complete. What it cuts:
// - Bound: a node whose lower bound is no less than the best step found cannot lead to a
//   shorter one. Per device, its remaining operations (the Rs of its checkpointed forwards
//   included; an undecided forward's R is not, it may never exist) each released no earlier
//   than its inputs allow and followed by at least the longest chain of work after it
//   (without Rs): for every release threshold, the earliest release among the operations
//   released no earlier, plus their work, plus the least chain after any of them — the
//   one-machine relaxation, which no order can beat.
// - Dominance: two nodes with the same operations done and the same forwards checkpointed have
//   the same memory levels and the same remaining choices; if one has every device free and
//   every pending message arriving no later, everything the other can do it can do no later.
//   The same test removes the interleavings of the devices' appends that reach one node twice.
// - Symmetry: a chain's micro-batches are interchangeable, so they enter its first stage in
//   order. And an R right after its own F is never taken: keeping the F's activations
//   instead reaches the same memory no later.
#include "core/passes/ExactSchedule.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "core/passes/ScheduleProblem.h"
#include "core/passes/Tolerance.h"

namespace mario {
namespace {

constexpr std::size_t kStatesPerKey = 16;

// a < b beyond rounding, where b may be infinite (no schedule yet).
bool shorter(double a, double b) { return std::isinf(b) ? a < b : clearlyBelow(a, b); }
constexpr std::size_t kMaxStoredStates = 1'000'000;

class BranchAndBound {
public:
    BranchAndBound(const ScheduleProblem& problem, const ExactOptions& options)
        : p_(problem), ops_(problem.ops()), options_(options), best_(options.upper_bound) {
        const std::size_t n = ops_.size();
        done_.assign(n, 0);
        checkpointed_.assign(n, 0);
        end_.assign(n, 0.0);
        release_.assign(n, 0.0);
        ready_.assign(p_.deviceCount(), 0.0);
        level_.assign(p_.deviceCount(), 0.0);
        order_.resize(p_.deviceCount());
        entryNext_.assign(p_.entryForwards().size(), 0);
        entryChain_.assign(n, -1);
        for (std::size_t c = 0; c < p_.entryForwards().size(); ++c)
            for (int f : p_.entryForwards()[c]) entryChain_[f] = static_cast<int>(c);
        sortTopologically();
        computeTails();
    }

    ExactResult run() {
        ExactResult result;
        result.root_bound = lowerBound();
        aborted_ = false;
        search(static_cast<int>(ops_.size()) - countOptional());
        result.nodes = nodes_;
        result.proven = !aborted_;
        result.found = !bestOrder_.empty();
        result.makespan = best_;
        if (result.found) {
            auto plan = p_.toPlan(bestOrder_);
            if (plan) result.plan = std::move(*plan);
        }
        return result;
    }

private:
    int countOptional() const {
        int rs = 0;
        for (const auto& op : ops_) rs += op.instruction.op == Op::Recompute;
        return rs;
    }

    // A static order in which every input, an F's R, and an R's backward come first.
    void sortTopologically() {
        const std::size_t n = ops_.size();
        std::vector<int> indegree(n, 0);
        std::vector<std::vector<int>> after(n);
        for (std::size_t i = 0; i < n; ++i) {
            for (const auto& input : ops_[i].inputs) after[input.op].push_back(static_cast<int>(i)), ++indegree[i];
            if (isBackwardStart(ops_[i].instruction.op)) {
                const int r = ops_[ops_[i].forward].recompute;
                after[r].push_back(static_cast<int>(i)), ++indegree[i];
            }
        }
        for (std::size_t i = 0; i < n; ++i)
            if (!indegree[i]) topo_.push_back(static_cast<int>(i));
        for (std::size_t k = 0; k < topo_.size(); ++k)
            for (int j : after[topo_[k]])
                if (--indegree[j] == 0) topo_.push_back(j);
        successors_ = std::move(after);
    }

    // The least work that must follow each operation's end: its device's REDUCE_GRAD and OPT,
    // and every chain of consumers (transfers included), Rs left out but an R's own backward in.
    void computeTails() {
        tail_.assign(ops_.size(), 0.0);
        for (auto it = topo_.rbegin(); it != topo_.rend(); ++it) {
            const int i = *it;
            double t = p_.tailMs(ops_[i].device);
            for (int k : successors_[i]) {
                if (ops_[k].instruction.op == Op::Recompute) continue;
                double lag = 0;
                for (const auto& input : ops_[k].inputs)
                    if (input.op == i) lag = input.lag;
                t = std::max(t, lag + ops_[k].ms + tail_[k]);
            }
            tail_[i] = t;
        }
    }

    bool exists(int i) const {
        const auto& op = ops_[i];
        return op.instruction.op != Op::Recompute || (done_[op.forward] && checkpointed_[op.forward]);
    }

    // Start time if appendable now, or a negative number.
    double startIfReady(int i) const {
        const ScheduleOp& op = ops_[i];
        if (done_[i] || !exists(i)) return -1;
        double start = ready_[op.device];
        for (const auto& input : op.inputs) {
            if (!done_[input.op]) return -1;
            start = std::max(start, end_[input.op] + input.lag);
        }
        if (isBackwardStart(op.instruction.op) && checkpointed_[op.forward] && !done_[ops_[op.forward].recompute])
            return -1;
        if (entryChain_[i] >= 0) {
            const auto& entry = p_.entryForwards()[entryChain_[i]];
            if (entry[entryNext_[entryChain_[i]]] != i) return -1;
        }
        if (op.instruction.op == Op::Recompute) {
            const auto& mine = order_[op.device];
            if (!mine.empty() && mine.back() == op.forward) return -1;  // keeping the F is never worse
        }
        return start;
    }

    double lowerBound() {
        double bound = 0;
        struct Job {
            double release, ms, after;
        };
        std::vector<std::vector<Job>> jobs(p_.deviceCount());
        for (int i : topo_) {
            if (done_[i] || !exists(i)) continue;
            const ScheduleOp& op = ops_[i];
            double r = ready_[op.device];
            for (const auto& input : op.inputs)
                r = std::max(r, (done_[input.op] ? end_[input.op] : release_[input.op] + ops_[input.op].ms) + input.lag);
            if (isBackwardStart(op.instruction.op) && done_[op.forward] && checkpointed_[op.forward]) {
                const int rec = ops_[op.forward].recompute;
                if (!done_[rec]) r = std::max(r, release_[rec] + ops_[rec].ms);
            }
            release_[i] = r;
            jobs[op.device].push_back({r, op.ms, tail_[i]});
            bound = std::max(bound, r + op.ms + tail_[i]);
        }
        for (int d = 0; d < p_.deviceCount(); ++d) {
            auto& list = jobs[d];
            bound = std::max(bound, ready_[d] + p_.tailMs(d));
            std::sort(list.begin(), list.end(), [](const Job& a, const Job& b) { return a.release < b.release; });
            double work = 0, least = std::numeric_limits<double>::infinity();
            for (auto it = list.rbegin(); it != list.rend(); ++it) {
                work += it->ms;
                least = std::min(least, it->after);
                bound = std::max(bound, it->release + work + least);
            }
        }
        return bound;
    }

    // False when a node with the same key and no later times was seen (this one is then cut).
    bool firstOfItsKind() {
        std::vector<std::uint64_t> key((2 * ops_.size() + 63) / 64, 0);
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            if (done_[i]) key[i / 64] |= std::uint64_t{1} << (i % 64);
            const std::size_t c = ops_.size() + i;
            if (checkpointed_[i]) key[c / 64] |= std::uint64_t{1} << (c % 64);
        }
        std::vector<double> times = ready_;
        for (std::size_t i = 0; i < ops_.size(); ++i)
            if (done_[i])
                for (int k : ops_[i].consumers)
                    if (!done_[k] && ops_[k].device != ops_[i].device) {
                        times.push_back(end_[i]);
                        break;
                    }
        auto& seen = table_[key];
        for (const auto& old : seen) {
            bool noLater = true;
            for (std::size_t t = 0; t < times.size() && noLater; ++t) noLater = atMost(old[t], times[t]);
            if (noLater) return false;
        }
        if (stored_ < kMaxStoredStates && seen.size() < kStatesPerKey) {
            seen.push_back(std::move(times));
            ++stored_;
        }
        return true;
    }

    void search(int remaining) {
        if (aborted_) return;
        if (++nodes_ > options_.node_budget) {
            aborted_ = true;
            return;
        }
        if (remaining == 0) {
            double step = 0;
            for (int d = 0; d < p_.deviceCount(); ++d) step = std::max(step, ready_[d] + p_.tailMs(d));
            if (shorter(step, best_)) {
                best_ = step;
                bestOrder_ = order_;
            }
            return;
        }
        if (!shorter(lowerBound(), best_)) return;
        if (!firstOfItsKind()) return;
        struct Child {
            double start;
            int op;
            bool checkpoint;
        };
        std::vector<Child> children;
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            const double start = startIfReady(static_cast<int>(i));
            if (start < 0) continue;
            const ScheduleOp& op = ops_[i];
            const double room = p_.room(op.device);
            if (op.instruction.op == Op::Forward) {
                if (atMost(level_[op.device] + op.bytes, room)) children.push_back({start, static_cast<int>(i), false});
                if (atMost(level_[op.device] + op.checkpointed_bytes, room))
                    children.push_back({start, static_cast<int>(i), true});
            } else if (atMost(level_[op.device] + op.bytes, room)) {
                children.push_back({start, static_cast<int>(i), false});
            }
        }
        std::stable_sort(children.begin(), children.end(),
                         [](const Child& a, const Child& b) { return a.start < b.start; });
        for (const Child& child : children) {
            apply(child.op, child.start, child.checkpoint);
            search(remaining - 1 + (child.checkpoint ? 1 : 0));  // a checkpointed F owes its R
            undo(child.op);
            if (aborted_) return;
        }
    }

    struct Saved {
        double ready, level;
    };
    void apply(int i, double start, bool checkpoint) {
        const ScheduleOp& op = ops_[i];
        saved_.push_back({ready_[op.device], level_[op.device]});
        done_[i] = 1;
        checkpointed_[i] = checkpoint;
        end_[i] = start + op.ms;
        ready_[op.device] = end_[i];
        level_[op.device] += checkpoint ? op.checkpointed_bytes : op.bytes;
        order_[op.device].push_back(i);
        if (entryChain_[i] >= 0) ++entryNext_[entryChain_[i]];
    }
    void undo(int i) {
        const ScheduleOp& op = ops_[i];
        done_[i] = 0;
        checkpointed_[i] = 0;
        ready_[op.device] = saved_.back().ready;
        level_[op.device] = saved_.back().level;
        saved_.pop_back();
        order_[op.device].pop_back();
        if (entryChain_[i] >= 0) --entryNext_[entryChain_[i]];
    }

    const ScheduleProblem& p_;
    const std::vector<ScheduleOp>& ops_;
    const ExactOptions options_;
    std::vector<int> topo_;
    std::vector<std::vector<int>> successors_;
    std::vector<double> tail_;
    std::vector<char> done_, checkpointed_;
    std::vector<double> end_, release_, ready_, level_;
    std::vector<std::vector<int>> order_;
    std::vector<int> entryNext_, entryChain_;
    std::vector<Saved> saved_;
    std::map<std::vector<std::uint64_t>, std::vector<std::vector<double>>> table_;
    std::size_t stored_ = 0;
    long long nodes_ = 0;
    bool aborted_ = false;
    double best_;
    std::vector<std::vector<int>> bestOrder_;
};

}  // namespace

Result<ExactResult> exactSchedule(const Plan& plan, const std::vector<double>& budget, const ExactOptions& options) {
    auto problem = ScheduleProblem::fromPlan(plan, budget);
    if (!problem) return problem.error();
    BranchAndBound search(*problem, options);
    return search.run();
}

}  // namespace mario
