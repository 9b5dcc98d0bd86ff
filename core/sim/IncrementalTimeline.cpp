#include "core/sim/IncrementalTimeline.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>

#include "core/sim/ComputeTime.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

constexpr std::size_t kNoSlot = static_cast<std::size_t>(-1);

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
    workAhead_.assign(plan.devices.size(), {});
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        workAhead_[d].assign(plan.devices[d].program.size(), 0.0);
        if (!plan.devices[d].program.empty())
            sumWorkAhead(plan, static_cast<int>(d), 0, plan.devices[d].program.size() - 1);
    }
    makespan_ = sim->makespan_ms;
    return true;
}

void IncrementalTimeline::sumWorkAhead(const Plan& plan, int device, std::size_t first, std::size_t last) {
    const auto& program = plan.devices[device].program;
    auto& ahead = workAhead_[device];
    for (std::size_t k = last + 1; k-- > first;)
        ahead[k] = k + 1 < program.size() ? ahead[k + 1] + computeMs(plan, program, k + 1) : 0.0;
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
        if (isRecv(program[i].op)) receiver_[slotOfInstruction(program[i])] = {device, i};
}

void IncrementalTimeline::moved(const Plan& plan, int device, std::size_t from, std::size_t to) {
    auto& timings = timings_[device];
    // Each instruction keeps its own old timing, so "it ends when it did" compares like with like.
    if (to < from) std::rotate(timings.begin() + to, timings.begin() + from, timings.begin() + from + 1);
    else std::rotate(timings.begin() + from, timings.begin() + from + 1, timings.begin() + to + 1);
    edits_.push_back({device, std::min(from, to), std::max(from, to), from, to});
    indexReceives(plan, device, std::min(from, to), std::max(from, to));
    sumWorkAhead(plan, device, std::min(from, to), std::max(from, to));
}

Result<bool> IncrementalTimeline::update(const Plan& plan, double giveUpAbove) {
    timingLog_.clear();
    arrivalLog_.clear();
    lastEdits_ = edits_;
    edits_.clear();
    lastMakespan_ = makespan_;
    rebuiltInUpdate_ = false;
    const Outcome outcome = propagate(plan, giveUpAbove);
    if (outcome == Outcome::Done) return true;
    if (outcome == Outcome::GaveUp) return false;
    // Too much work for an edit: a cycle, or an edit that moved most of the timeline. Start over.
    for (auto it = timingLog_.rbegin(); it != timingLog_.rend(); ++it) timings_[it->device][it->index] = it->old;
    for (auto it = arrivalLog_.rbegin(); it != arrivalLog_.rend(); ++it) arrival_[it->slot] = it->old;
    timingLog_.clear();
    arrivalLog_.clear();
    timingsBeforeRebuild_ = timings_;
    arrivalBeforeRebuild_ = arrival_;
    rebuiltInUpdate_ = true;
    auto rebuilt = rebuild(plan);
    if (!rebuilt || !*rebuilt) return rebuilt;
    return makespan_ <= giveUpAbove || same(makespan_, giveUpAbove);
}

// Label-correcting evaluation of the longest-path equations, in time order: a queue of
// (time, device, index) entries, each meaning "device's times may change from index on".
IncrementalTimeline::Outcome IncrementalTimeline::propagate(const Plan& plan, double giveUpAbove) {
    using Entry = std::tuple<double, int, std::size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    std::vector<std::size_t> stableFrom(timings_.size(), 0);  // before it, no early stop
    auto startOf = [&](int d, std::size_t i) { return i == 0 ? 0.0 : timings_[d][i - 1].end; };
    for (const Edit& edit : lastEdits_) {
        stableFrom[edit.device] = std::max(stableFrom[edit.device], edit.last + 1);
        queue.emplace(startOf(edit.device, edit.first), edit.device, edit.first);
    }
    const std::size_t limit = 4 * instructions_ + 1024;
    std::size_t work = 0;
    while (!queue.empty()) {
        auto [key, d, i] = queue.top();
        queue.pop();
        const auto& program = plan.devices[d].program;
        auto& timings = timings_[d];
        double t = startOf(d, i);
        for (std::size_t k = i; k < program.size(); ++k) {
            if (++work > limit) return Outcome::TooMuchWork;
            const Instruction& ins = program[k];
            InstructionTiming next{t, t};
            if (isRecv(ins.op)) {
                next.end = std::max(t, arrival_[slotOfInstruction(ins)]);
                // Work that is due earlier elsewhere may still change this arrival: do it first.
                if (!queue.empty() && std::get<0>(queue.top()) < next.end) {
                    queue.emplace(next.end, d, k);
                    break;
                }
            } else if (isSend(ins.op)) {
                const std::size_t slot = slotOfInstruction(ins);
                if (slot != kNoSlot) {
                    const double arrives = t + MessageSlots::transferMs(plan, ins, topology_.sendTarget(ins));
                    if (!same(arrives, arrival_[slot])) {
                        arrivalLog_.push_back({slot, arrival_[slot]});
                        const double earlier = std::min(arrives, arrival_[slot]);
                        arrival_[slot] = arrives;
                        const Slot& to = receiver_[slot];
                        if (to.device >= 0) queue.emplace(earlier, to.device, to.index);
                    }
                }
            } else {
                next.end = t + computeMs(plan, program, k);
            }
            if (k >= stableFrom[d] && same(next, timings[k])) break;  // the rest of the program stands
            // Beyond rounding (a sum in another order), not by a last bit.
            if (next.end + workAhead_[d][k] > giveUpAbove && !same(next.end + workAhead_[d][k], giveUpAbove)) {
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
        if (it->to < it->from)
            std::rotate(timings.begin() + it->to, timings.begin() + it->to + 1, timings.begin() + it->from + 1);
        else std::rotate(timings.begin() + it->from, timings.begin() + it->to, timings.begin() + it->to + 1);
        indexReceives(plan, it->device, it->first, it->last);
        sumWorkAhead(plan, it->device, it->first, it->last);
    }
    timingLog_.clear();
    arrivalLog_.clear();
    lastEdits_.clear();
    rebuiltInUpdate_ = false;
    makespan_ = lastMakespan_;
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
