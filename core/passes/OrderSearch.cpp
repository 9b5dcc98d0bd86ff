#include "core/passes/OrderSearch.h"

#include <algorithm>
#include <optional>

#include "core/passes/Tolerance.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

// The block [from, from + count) of `items` moved to start at `to` (one rotate, either way).
template <class T>
void moveBlock(std::vector<T>& items, std::size_t from, std::size_t to, std::size_t count) {
    if (to < from) std::rotate(items.begin() + to, items.begin() + from, items.begin() + from + count);
    else std::rotate(items.begin() + from, items.begin() + from + count, items.begin() + to + count);
}

// Where an instruction stands among the work of its (stage, micro-batch) on its device.
int rankOf(Op op) {
    switch (op) {
        case Op::Forward: return 0;
        case Op::Recompute: return 1;
        case Op::Backward:
        case Op::BackwardInput: return 2;
        case Op::BackwardWeight: return 3;
        default: return -1;
    }
}

bool movableOp(Op op) { return rankOf(op) >= 0; }

// The RECV that brings `x` its input, and the SEND that passes its output on.
bool feeds(const Instruction& recv, const Instruction& x) {
    if (recv.stage != x.stage || recv.microbatch != x.microbatch) return false;
    return (recv.op == Op::RecvForward && x.op == Op::Forward) ||
           (recv.op == Op::RecvBackward && isBackwardStart(x.op));
}
bool carries(const Instruction& send, const Instruction& x) {
    if (send.stage != x.stage || send.microbatch != x.microbatch) return false;
    return (send.op == Op::SendForward && x.op == Op::Forward) ||
           (send.op == Op::SendBackward && isBackwardStart(x.op));
}

}  // namespace

OrderSearch::OrderSearch(Plan& plan, IncrementalTimeline timeline, PipelineTopology topology,
                         std::vector<double> budget, OrderSearchLimits limits)
    : plan_(plan), timeline_(std::move(timeline)), topology_(std::move(topology)), budget_(std::move(budget)),
      statics_(staticBytesPerDevice(plan)), limits_(limits), startEvaluations_(timeline_.evaluations()) {
    bool zeroCompute = false;
    for (const auto& device : plan_.devices) {
        deltas_.push_back(memoryDeltas(plan_, device.program));
        for (std::size_t i = 0; i < device.program.size(); ++i)
            if (isCompute(device.program[i].op) && !(computeMs(plan_, device.program, i) > 0)) zeroCompute = true;
    }
    // A cycle of zero length would settle in the incremental timeline unnoticed, so such plans are
    // re-timed whole on every trial. But program order alone has no cycle: every cycle crosses a
    // message, so it is zero-length only where a message takes no time too. Where every transfer
    // takes some (any link latency), a cycle grows and is caught as the incremental update's give-up
    // or work guard. An embedding-only first stage of a LLaMA (no dropout: its input gradient is
    // no kernel) made every trial whole: reorder ran 11 s on it against 0.2 s on the even split.
    bool zeroMessage = false;
    for (const auto& stage : plan_.stages)
        if (!(plan_.link.transferMs(stage.cost.send_bytes) > 0)) zeroMessage = true;
    wholeSimulations_ = zeroCompute && zeroMessage;
}

std::vector<OrderSearch::Group> OrderSearch::groupsOf(int device) const {
    const auto& program = plan_.devices[device].program;
    std::vector<Group> groups;
    std::vector<char> claimed(program.size(), 0);
    std::vector<Group> byStart(program.size());
    std::vector<char> starts(program.size(), 0);
    for (std::size_t i = 0; i < program.size(); ++i) {
        const Instruction& x = program[i];
        const bool paired = x.overlapped || overlappedPairAt(program, i).has_value();
        if (!hasMicrobatch(x.op) || !movableOp(x.op) || paired) continue;
        Group g{i, i, i, true};
        while (g.first > 0 && !claimed[g.first - 1] && isRecv(program[g.first - 1].op) && feeds(program[g.first - 1], x))
            --g.first;
        while (g.last + 1 < program.size() && isSend(program[g.last + 1].op) && carries(program[g.last + 1], x)) ++g.last;
        for (std::size_t k = g.first; k <= g.last; ++k) claimed[k] = 1;
        byStart[g.first] = g;
        starts[g.first] = 1;
    }
    for (std::size_t i = 0; i < program.size();) {
        if (starts[i]) {
            groups.push_back(byStart[i]);
            i = byStart[i].last + 1;
        } else {
            groups.push_back({i, i, i, false});  // a barrier: communication of no group, a pair, a sync
            ++i;
        }
    }
    return groups;
}

bool OrderSearch::mustPrecede(const Instruction& a, const Instruction& b) const {
    if (a.microbatch != b.microbatch) return false;
    if (a.stage == b.stage) return rankOf(a.op) < rankOf(b.op);
    // Neighbouring stages of a chain on one device: the producer first.
    if (a.op == Op::Forward && b.op == Op::Forward) return topology_.nextStage(a.stage) == b.stage;
    if (isBackwardStart(a.op) && isBackwardStart(b.op)) return topology_.previousStage(a.stage) == b.stage;
    return false;
}

bool OrderSearch::fitsBudget(int device) const {
    if (static_cast<std::size_t>(device) >= budget_.size()) return true;
    double running = 0, peak = 0;
    for (double delta : deltas_[device]) peak = std::max(peak, running += delta);
    return atMost(statics_[device] + peak, budget_[device]);
}

double OrderSearch::finishSum() const {
    double sum = 0;
    for (std::size_t d = 0; d < plan_.devices.size(); ++d) {
        const auto& timings = timeline_.timings(static_cast<int>(d));
        if (!timings.empty()) sum += timings.back().end;
    }
    return sum;
}

bool OrderSearch::outOfBudget() const {
    if (limits_.cancel && limits_.cancel->load(std::memory_order_relaxed)) return true;
    return limits_.max_evaluations > 0 && evaluations() >= limits_.max_evaluations;
}

Result<bool> OrderSearch::tryMove(int device, std::size_t from, std::size_t to, std::size_t count) {
    auto& program = plan_.devices[device].program;
    moveBlock(program, from, to, count);
    moveBlock(deltas_[device], from, to, count);
    auto restore = [&] {
        moveBlock(program, to, from, count);
        moveBlock(deltas_[device], to, from, count);
    };
    if (!fitsBudget(device)) {
        restore();
        return false;
    }
    const double before = timeline_.makespan();
    const double beforeSum = finishSum();
    timeline_.moved(plan_, device, from, to, count);
    auto updated = timeline_.update(plan_, before + roundingOf(before, before), wholeSimulations_);
    if (!updated) return updated.error();
    const double after = timeline_.makespan();
    const bool keep =
        *updated && (clearlyBelow(after, before) || (atMost(after, before) && clearlyBelow(finishSum(), beforeSum)));
    if (keep) return true;
    restore();
    timeline_.undo(plan_);
    return false;
}

Result<bool> OrderSearch::improveDevice(int device, PassReport& report) {
    bool changed = false;
    std::vector<Group> groups = groupsOf(device);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        if (outOfBudget()) break;
        if (!groups[gi].movable) continue;
        const auto& program = plan_.devices[device].program;
        const Group g = groups[gi];
        const Instruction x = program[g.compute];
        const std::size_t count = g.last - g.first + 1;
        const auto& timings = timeline_.timings(device);
        // Earlier only helps when x did not wait for its input (it could then start sooner).
        bool waited = false;
        for (std::size_t k = g.first; k < g.compute; ++k) waited = waited || clearlyBelow(timings[k].start, timings[k].end);
        // Later only helps when x holds up the next instruction of its device.
        const bool holdsUp = g.last + 1 < program.size() && atMost(timings[g.last + 1].start, timings[g.compute].end);
        // On small plans (no window) every move is tried: the filters above are not exact (an
        // earlier place can also free memory for another move).
        if (!limits_.window) waited = false;
        const bool later = holdsUp || !limits_.window;
        const std::size_t reach = limits_.window ? limits_.window : groups.size();
        std::optional<std::size_t> kept;
        for (std::size_t step = 1; !waited && step <= reach && step <= gi && !kept; ++step) {
            const Group& y = groups[gi - step];
            if (!y.movable || mustPrecede(program[y.compute], x)) break;
            auto tried = tryMove(device, g.first, y.first, count);
            if (!tried) return tried.error();
            if (*tried) kept = y.first + (g.compute - g.first);
        }
        for (std::size_t step = 1; later && step <= reach && gi + step < groups.size() && !kept; ++step) {
            const Group& y = groups[gi + step];
            if (!y.movable || mustPrecede(x, program[y.compute])) break;
            const std::size_t to = y.last + 1 - count;
            auto tried = tryMove(device, g.first, to, count);
            if (!tried) return tried.error();
            if (*tried) kept = to + (g.compute - g.first);
        }
        if (kept) {
            report.changes.push_back({ChangeKind::Moved, device, x, static_cast<int>(g.compute), static_cast<int>(*kept)});
            changed = true;
            groups = groupsOf(device);
        }
    }
    return changed;
}

Result<PassReport> OrderSearch::run() {
    PassReport report{PassId::Reorder, 0, {}};
    for (bool changed = true; changed && !outOfBudget();) {
        changed = false;
        for (std::size_t d = 0; d < plan_.devices.size() && !outOfBudget(); ++d) {
            auto improved = improveDevice(static_cast<int>(d), report);
            if (!improved) return improved.error();
            changed = changed || *improved;
        }
    }
    report.evaluations = evaluations();
    return report;
}

}  // namespace mario
