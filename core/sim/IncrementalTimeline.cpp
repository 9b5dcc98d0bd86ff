#include "core/sim/IncrementalTimeline.h"

#include <algorithm>
#include <cmath>

#include "core/sim/ComputeTime.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

// Two evaluations of the same instruction from the same inputs agree to the last bit; inputs
// reached along different paths may differ in the last bits of a sum, and must not keep the
// re-evaluation running to the end of the program.
bool same(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }
bool same(const InstructionTiming& a, const InstructionTiming& b) {
    return same(a.start, b.start) && same(a.end, b.end);
}

}  // namespace

Result<IncrementalTimeline> IncrementalTimeline::build(const Plan& plan) {
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    MessageSlots messages(plan, topology->stageCount());
    IncrementalTimeline timeline(std::move(*topology), std::move(messages));
    auto ok = timeline.rebuild(plan);
    if (!ok) return ok.error();
    if (!*ok) return makeError("the plan deadlocks; there is no timeline to follow");
    return timeline;
}

Result<bool> IncrementalTimeline::rebuild(const Plan& plan) {
    auto sim = Simulator::run(plan, SimOptions::timelineOnly());
    if (!sim) return sim.error();
    if (sim->deadlocked) return false;
    const std::size_t slots = messages_.size();
    arrival_.assign(slots, 0.0);
    receiver_.assign(slots, Slot{});
    timings_.assign(plan.devices.size(), {});
    instructions_ = 0;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        timings_[d] = std::move(sim->devices[d].timings);
        const auto& program = plan.devices[d].program;
        instructions_ += program.size();
        for (std::size_t i = 0; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            const std::size_t slot = slotOfInstruction(ins);
            if (slot == kNoSlot) continue;
            if (isRecv(ins.op)) receiver_[slot] = {static_cast<int>(d), i};
            else if (isSend(ins.op))
                arrival_[slot] = timings_[d][i].start + MessageSlots::transferMs(plan, ins, topology_.sendTarget(ins));
        }
    }
    steps_.assign(plan.devices.size(), {});
    workAhead_.assign(plan.devices.size(), {});
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        steps_[d].resize(plan.devices[d].program.size());
        if (!plan.devices[d].program.empty())
            describeSteps(plan, static_cast<int>(d), 0, plan.devices[d].program.size() - 1);
        workAhead_[d].assign(plan.devices[d].program.size(), 0.0);
        if (!plan.devices[d].program.empty()) sumWorkAhead(static_cast<int>(d), 0, plan.devices[d].program.size() - 1);
    }
    makespan_ = sim->makespan_ms;
    tails_.clear();
    return true;
}

void IncrementalTimeline::takeTails() {
    const std::size_t devices = steps_.size();
    tails_.resize(devices);
    for (std::size_t d = 0; d < devices; ++d) tails_[d].resize(steps_[d].size());
    horizon_ = horizonBeforeEdits_ = -std::numeric_limits<double>::infinity();
    // Backwards through the dependency graph, as the simulator goes forwards.
    const bool whole = walkFromEnd([this](int d, std::size_t k) {
        const std::vector<Step>& steps = steps_[d];
        Tail* tails = tails_[d].data();
        Tail tail{0, 0, timings_[d][k].start, timings_[d][k].end};
        if (k + 1 < steps.size()) {
            const Step& next = steps[k + 1];
            const double own = next.kind == Step::Compute ? next.ms : 0.0;
            tail.withoutRecompute = tails[k + 1].withoutRecompute + (next.recompute ? 0.0 : own);
            tail.full = tails[k + 1].full + own;
        }
        if (auto to = handoff(d, k)) {
            const Tail& there = tails_[to->device][to->index];
            tail.withoutRecompute = std::max(tail.withoutRecompute, to->ms + there.withoutRecompute);
            tail.full = std::max(tail.full, to->ms + there.full);
        }
        tails[k] = tail;
    });
    if (!whole) tails_.clear();  // a cycle: no tails
}

std::optional<IncrementalTimeline::Handoff> IncrementalTimeline::handoff(int device, std::size_t index) const {
    const Step& step = steps_[device][index];
    if (step.kind != Step::Send || step.slot == kNoSlot) return std::nullopt;
    const Slot to = receiver_[step.slot];
    if (to.device < 0) return std::nullopt;
    return Handoff{to.device, to.index, step.ms};
}

void IncrementalTimeline::sumWorkAhead(int device, std::size_t first, std::size_t last) {
    const auto& steps = steps_[device];
    auto& ahead = workAhead_[device];
    for (std::size_t k = last + 1; k-- > first;)
        ahead[k] = k + 1 < steps.size() && steps[k + 1].kind == Step::Compute ? ahead[k + 1] + steps[k + 1].ms
                   : k + 1 < steps.size()                                     ? ahead[k + 1]
                                                                              : 0.0;
}

void IncrementalTimeline::describeSteps(const Plan& plan, int device, std::size_t first, std::size_t last) {
    const auto& program = plan.devices[device].program;
    auto& steps = steps_[device];
    for (std::size_t k = first; k <= last && k < program.size(); ++k) {
        const Instruction& ins = program[k];
        Step& step = steps[k];
        step.slot = slotOfInstruction(ins);
        step.recompute = ins.op == Op::Recompute;
        if (isRecv(ins.op)) {
            step.kind = Step::Recv;
            step.ms = 0;
        } else if (isSend(ins.op)) {
            step.kind = Step::Send;
            step.ms = step.slot == kNoSlot ? 0.0 : MessageSlots::transferMs(plan, ins, topology_.sendTarget(ins));
        } else {
            step.kind = Step::Compute;
            step.ms = computeMs(plan, program, k);
        }
    }
}

std::size_t IncrementalTimeline::slotOfInstruction(const Instruction& ins) const {
    if (isRecv(ins.op)) return messages_.of(ins.op == Op::RecvBackward, ins.stage, messages_.denseOf(ins));
    if (!isSend(ins.op)) return kNoSlot;
    const int target = topology_.sendTarget(ins);
    if (target < 0) return kNoSlot;
    return messages_.of(ins.op == Op::SendBackward, target, messages_.denseOf(ins));
}

void IncrementalTimeline::indexReceives(const Plan& plan, int device, std::size_t first, std::size_t last) {
    const auto& program = plan.devices[device].program;
    for (std::size_t i = first; i <= last && i < program.size(); ++i)
        if (isRecv(program[i].op)) receiver_[steps_[device][i].slot] = {device, i};
}

namespace {

// The block of `count` elements at `from` comes to stand at `to` (either direction).
template <class Vector>
void rotateBlock(Vector& v, std::size_t from, std::size_t to, std::size_t count) {
    if (to < from) std::rotate(v.begin() + to, v.begin() + from, v.begin() + from + count);
    else std::rotate(v.begin() + from, v.begin() + from + count, v.begin() + to + count);
}

}  // namespace

void IncrementalTimeline::moved(const Plan& plan, int device, std::size_t from, std::size_t to, std::size_t count) {
    // Each instruction keeps its own old timing, so "it ends when it did" compares like with like.
    rotateBlock(timings_[device], from, to, count);
    const std::size_t first = std::min(from, to), last = std::max(from, to) + count - 1;
    edits_.push_back({device, first, last, from, to, count});
    if (!tails_.empty()) {
        const auto& program = plan.devices[device].program;
        bool recomputes = true;
        for (std::size_t k = to; k < to + count; ++k) recomputes = recomputes && program[k].op == Op::Recompute;
        if (!recomputes) {
            tails_.clear();
        } else {
            rotateBlock(tails_[device], from, to, count);
            // When the Rs started when the tails were taken: what can reach their place then ended
            // no later. Not to the last bit: an update keeps the old times past an instruction that
            // ends when it did up to rounding, so an end may sit a last bit past the start of the R
            // that follows it (propagate compares with same()).
            for (std::size_t k = to; k < to + count; ++k) horizon_ = std::max(horizon_, tails_[device][k].startThen);
            // Rs moved later no longer precede what they passed, so their own tails (taken where
            // they stood) may count it. The tail of what now follows them holds instead: a chain
            // after the block's end runs through that instruction.
            if (to > from)
                for (std::size_t k = to; k < to + count; ++k)
                    tails_[device][k] = to + count < tails_[device].size() ? tails_[device][to + count] : Tail{};
        }
    }
    // An overlapped pair's time depends on its neighbour: describe one step either side too.
    describeSteps(plan, device, first > 0 ? first - 1 : 0, last + 1);
    indexReceives(plan, device, first, last);
    sumWorkAhead(device, first > 0 ? first - 1 : 0, std::min(last + 1, timings_[device].size() - 1));
}

Result<bool> IncrementalTimeline::update(const Plan& plan, double giveUpAbove, bool wholeSimulation) {
    timingLog_.clear();
    arrivalLog_.clear();
    lastEdits_ = edits_;
    edits_.clear();
    lastMakespan_ = makespan_;
    lastHorizon_ = horizonBeforeEdits_;
    horizonBeforeEdits_ = horizon_;
    rebuiltInUpdate_ = false;
    const Outcome outcome = wholeSimulation ? Outcome::TooMuchWork : propagate(giveUpAbove);
    if (outcome == Outcome::Done) return true;
    if (outcome == Outcome::GaveUp) return false;
    // Too much work for an edit (a cycle, or an edit that moved most of the timeline), or the
    // caller asked for a whole simulation. Start over.
    for (auto it = timingLog_.rbegin(); it != timingLog_.rend(); ++it) timings_[it->device][it->index] = it->old;
    for (auto it = arrivalLog_.rbegin(); it != arrivalLog_.rend(); ++it) arrival_[it->slot] = it->old;
    timingLog_.clear();
    arrivalLog_.clear();
    timingsBeforeRebuild_ = timings_;
    arrivalBeforeRebuild_ = arrival_;
    rebuiltInUpdate_ = true;
    auto rebuilt = rebuild(plan);
    // A whole re-timing re-evaluates every instruction: counted, so that a pass's budget in
    // evaluations is spent by it too (uncounted, reorder ran 405,793 trials, 11 s, on a plan whose
    // every trial was whole).
    evaluations_ += instructions_;
    if (!rebuilt || !*rebuilt) return rebuilt;
    return makespan_ <= giveUpAbove || same(makespan_, giveUpAbove);
}

// Label-correcting evaluation of the longest-path equations, in time order: a queue of
// (time, device, index) entries, each meaning "device's times may change from index on".
IncrementalTimeline::Outcome IncrementalTimeline::propagate(double giveUpAbove) {
    // A min-heap on time alone: which of two equal times goes first changes no result (the
    // equations have one solution), and comparing whole tuples was a tenth of the re-timing.
    // The queue and stableFrom are members, reused: an update re-times a few dozen instructions,
    // and allocating them per update was a tenth of its time (issue 45).
    struct Later {
        bool operator()(const QueueEntry& a, const QueueEntry& b) const { return a.time > b.time; }
    };
    struct Heap {  // std::priority_queue's own push and pop, on the member vector
        std::vector<QueueEntry>& entries;
        bool empty() const { return entries.empty(); }
        const QueueEntry& top() const { return entries.front(); }
        void push(const QueueEntry& entry) {
            entries.push_back(entry);
            std::push_heap(entries.begin(), entries.end(), Later{});
        }
        void pop() {
            std::pop_heap(entries.begin(), entries.end(), Later{});
            entries.pop_back();
        }
    } queue{queue_};
    queue_.clear();
    std::vector<std::size_t>& stableFrom = stableFrom_;  // before it, no early stop
    stableFrom.assign(timings_.size(), 0);
    auto startOf = [&](int d, std::size_t i) { return i == 0 ? 0.0 : timings_[d][i - 1].end; };
    for (const Edit& edit : lastEdits_) {
        stableFrom[edit.device] = std::max(stableFrom[edit.device], edit.last + 1);
        queue.push({startOf(edit.device, edit.first), edit.device, edit.first});
    }
    const std::size_t limit = 4 * instructions_ + 1024;
    std::size_t work = 0;
    while (!queue.empty()) {
        const auto [key, d, i] = queue.top();
        queue.pop();
        // The device's arrays as plain pointers: the logs' push_back may write anywhere as far
        // as the compiler knows, so through the vectors every access reloaded them (issue 45).
        const Step* const steps = steps_[d].data();
        const std::size_t count = steps_[d].size();
        InstructionTiming* const timings = timings_[d].data();
        const double* const workAhead = workAhead_[d].data();
        const Tail* const tails = tails_.empty() ? nullptr : tails_[d].data();
        const std::size_t stable = stableFrom[d];
        const double horizon = horizon_;
        double t = startOf(d, i);
        for (std::size_t k = i; k < count; ++k) {
            if (++work > limit) return Outcome::TooMuchWork;
            const Step& step = steps[k];
            InstructionTiming next{t, t};
            if (step.kind == Step::Recv) {
                next.end = std::max(t, arrival_[step.slot]);
                // Work due earlier elsewhere may still bring this arrival forward, or (for the
                // first instruction of the entry) the start it was given: do that work first, so
                // that no time is ever followed that ends later than it will (the give-up test
                // relies on it: anything still to lower a time has a queue entry due no later than
                // the lowered time). A receive later in the entry that does not wait ends at t,
                // which is already safe, whatever its arrival becomes (yielding at every receive
                // made four of five queue entries on GPT-3 13B Chimera 32×64).
                if ((k == i || next.end > t) && !queue.empty() && queue.top().time < next.end) {
                    queue.push({next.end, d, k});
                    break;
                }
            } else if (step.kind == Step::Send) {
                const std::size_t slot = step.slot;
                if (slot != kNoSlot) {
                    const double arrives = t + step.ms;
                    if (!same(arrives, arrival_[slot])) {
                        arrivalLog_.push_back({slot, arrival_[slot]});
                        const double earlier = std::min(arrives, arrival_[slot]);
                        arrival_[slot] = arrives;
                        const Slot& to = receiver_[slot];
                        if (to.device >= 0) queue.push({earlier, to.device, to.index});
                    }
                }
            } else {
                next.end = t + step.ms;
            }
            if (k >= stable && same(next, timings[k])) break;  // the rest of the program stands
            // Beyond rounding (a sum in another order), not by a last bit.
            double ahead = workAhead[k];
            if (tails) {
                const Tail& tail = tails[k];
                const bool pastMovedRs = tail.endThen > horizon && !same(tail.endThen, horizon);
                ahead = std::max(ahead, pastMovedRs ? tail.full : tail.withoutRecompute);
            }
            if (next.end + ahead > giveUpAbove && !same(next.end + ahead, giveUpAbove)) {
                evaluations_ += work;
                return Outcome::GaveUp;
            }
            timingLog_.push_back({d, k, timings[k]});
            timings[k] = next;
            t = next.end;
        }
    }
    evaluations_ += work;
    makespan_ = 0;
    for (const auto& timings : timings_)
        if (!timings.empty()) makespan_ = std::max(makespan_, timings.back().end);
    return Outcome::Done;
}

void IncrementalTimeline::undo(const Plan& plan) {
    if (rebuiltInUpdate_) {
        timings_ = std::move(timingsBeforeRebuild_);
        arrival_ = std::move(arrivalBeforeRebuild_);
    }
    for (auto it = timingLog_.rbegin(); it != timingLog_.rend(); ++it) timings_[it->device][it->index] = it->old;
    for (auto it = arrivalLog_.rbegin(); it != arrivalLog_.rend(); ++it) arrival_[it->slot] = it->old;
    for (auto it = lastEdits_.rbegin(); it != lastEdits_.rend(); ++it) {
        auto& timings = timings_[it->device];
        rotateBlock(timings, it->to, it->from, it->count);
        if (!tails_.empty()) rotateBlock(tails_[it->device], it->to, it->from, it->count);
        describeSteps(plan, it->device, it->first > 0 ? it->first - 1 : 0, it->last + 1);
        indexReceives(plan, it->device, it->first, it->last);
        sumWorkAhead(it->device, it->first > 0 ? it->first - 1 : 0, std::min(it->last + 1, timings.size() - 1));
    }
    timingLog_.clear();
    arrivalLog_.clear();
    lastEdits_.clear();
    rebuiltInUpdate_ = false;
    makespan_ = lastMakespan_;
    horizon_ = horizonBeforeEdits_ = lastHorizon_;
}

SimResult IncrementalTimeline::toSimResult() const {
    SimResult result;
    result.makespan_ms = makespan_;
    result.devices.resize(timings_.size());
    for (std::size_t d = 0; d < timings_.size(); ++d) {
        result.devices[d].index = static_cast<int>(d);
        result.devices[d].timings = timings_[d];
    }
    return result;
}

}  // namespace mario
