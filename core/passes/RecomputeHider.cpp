#include "core/passes/RecomputeHider.h"

#include <algorithm>
#include <limits>

#include "core/passes/Passes.h"
#include "core/passes/Tolerance.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

// Rs considered for one wait: the nearest ones after it, whose backwards come first.
constexpr std::size_t kCandidatesPerWait = 4;
// Receives an R is tried before when it moves later: the nearest ones after it (and always the
// place right before its backward). On the tiny plans of tests/core/hide_exhaustive_test.cpp a
// window holds at most a handful; on large plans this keeps a move's trials few.
constexpr std::size_t kLaterReceives = 4;

// The one instruction at `from` comes to stand at `to`, either direction.
void rotateOne(std::vector<Instruction>& program, std::size_t from, std::size_t to) {
    if (to < from) std::rotate(program.begin() + to, program.begin() + from, program.begin() + from + 1);
    else std::rotate(program.begin() + from, program.begin() + from + 1, program.begin() + to + 1);
}

}  // namespace

RecomputeHider::RecomputeHider(Plan& plan, IncrementalTimeline timeline, const std::vector<double>& budget,
                               const std::atomic<bool>* cancel, int maxSimulations)
    : plan_(plan), budget_(budget), statics_(staticBytesPerDevice(plan)), cancel_(cancel),
      maxSimulations_(maxSimulations), current_(std::move(timeline)) {}

Result<PassReport> RecomputeHider::run(bool dropsFirst) {
    PassReport report{PassId::Hide, 0, {}};
    indices_.resize(plan_.devices.size());
    if (dropsFirst)
        if (auto dropped = dropExposed(report); !dropped) return dropped.error();
    // Later moves first: they free memory that earlier moves and drops may then spend. Then
    // earlier moves (they spend memory only from a bubble to the backward), then drops of what
    // is still exposed; a drop shortens the step and may open new bubbles, so again.
    for (int round = 0; round < 8 && !stopped(); ++round) {
        const std::size_t before = report.changes.size();
        if (auto later = moveLater(report); !later) return later.error();
        if (auto earlier = moveEarlier(report); !earlier) return earlier.error();
        if (auto dropped = dropExposed(report); !dropped) return dropped.error();
        if (report.changes.size() == before) break;
    }
    report.simulations = simulations_;
    return report;
}

bool RecomputeHider::stopped() const {
    return (cancel_ && cancel_->load(std::memory_order_relaxed)) ||
           (maxSimulations_ > 0 && simulations_ >= maxSimulations_);
}

double RecomputeHider::budgetOf(int device) const {
    return device < static_cast<int>(budget_.size()) ? budget_[device] : std::numeric_limits<double>::infinity();
}

bool RecomputeHider::waited(int device, std::size_t receive) const {
    const InstructionTiming& t = current_.timings(device)[receive];
    return clearlyBelow(t.start, t.end);
}

// Relax-checkpoint's drop, limited to the Rs that delay their backward in the current
// timeline, within hide's budget.
Result<bool> RecomputeHider::dropExposed(PassReport& report) {
    std::vector<const InstructionTimings*> timings;
    for (std::size_t d = 0; d < plan_.devices.size(); ++d) timings.push_back(&current_.timings(static_cast<int>(d)));
    // The levels kept move by move let relax pass over the devices where nothing comes near
    // fitting; on GPT-3 13B Chimera 32 × 2048 summing every device's levels again for each
    // round's drops was a tenth of hide (issue 45).
    std::vector<const WindowPeaks*> levels;
    for (const ProgramIndex& index : indices_) levels.push_back(index.fresh ? &index.levels : nullptr);
    PassReport dropped = relaxCheckpoint(plan_, budget_, timings, /*exposedOnly=*/true, levels);
    if (!dropped.changed()) return false;
    report.changes.insert(report.changes.end(), dropped.changes.begin(), dropped.changes.end());
    auto rebuilt = IncrementalTimeline::build(plan_);
    ++simulations_;
    if (!rebuilt) return rebuilt.error();
    current_ = std::move(*rebuilt);
    current_.takeTails();
    for (ProgramIndex& index : indices_) index.fresh = false;
    return true;
}

Result<bool> RecomputeHider::moveEarlier(PassReport& report) {
    bool any = false;
    cursor_.assign(plan_.devices.size(), 0);
    for (bool found = true; found && !stopped();) {
        found = false;
        for (int d = 0; d < static_cast<int>(plan_.devices.size()) && !stopped(); ++d) {
            auto move = firstEarlierMove(d);
            if (!move) continue;
            found = true;
            auto kept = tryMoves({*move});
            if (!kept) return kept.error();
            if (!*kept) continue;
            indexMoved(*move);
            report.changes.push_back({ChangeKind::Moved, move->device, move->recompute, static_cast<int>(move->from),
                                      static_cast<int>(move->to)});
            any = true;
        }
    }
    return any;
}

// An R is tried at each of its later places (laterTargets), and goes to the one that makes the
// step shortest, if that is shorter than now. Only an R on a longest path of the timeline can
// gain: a longest path without it stays in the plan after the move (the R only lengthens the
// place it moves to), so the step could not shrink. That test, one walk over the timeline per
// round, cut the losing trials on GPT-3 13B Chimera 32 × 64 from 1 367 to 10 (none gains
// there), and hide's time there from 65 to 55 ms.
Result<bool> RecomputeHider::moveLater(PassReport& report) {
    bool any = false;
    std::vector<std::vector<double>> after;  // taken when first needed, again after a kept move
    for (int d = 0; d < static_cast<int>(plan_.devices.size()) && !stopped(); ++d) {
        const auto& program = plan_.devices[d].program;
        for (std::size_t r = 0; r < program.size() && !stopped(); ++r) {
            if (program[r].op != Op::Recompute) continue;
            const std::vector<std::size_t> targets = laterTargets(d, r);
            if (targets.empty()) continue;
            if (after.empty()) after = chainsAfter();
            if (!after.empty() && !atMost(current_.makespan(), current_.timings(d)[r].end + after[d][r])) continue;
            double best = current_.makespan();
            std::optional<Move> chosen;
            for (std::size_t to : targets) {
                const Move move{d, r, to, program[r]};
                const Instruction& before = program[to + 1];
                const std::size_t place = (static_cast<std::size_t>(before.op) << 48) ^
                                          (static_cast<std::size_t>(before.stage) << 24) ^
                                          static_cast<std::size_t>(before.microbatch + 1);
                if (!triedLater_.insert(d, program[r].stage, program[r].microbatch, place)) continue;
                auto step = measure(move, best);
                if (!step) return step.error();
                if (*step && clearlyBelow(**step, best)) best = **step, chosen = move;
            }
            if (!chosen) continue;
            auto kept = tryMoves({*chosen}, best);
            if (!kept) return kept.error();
            if (!*kept) continue;
            indexMoved(*chosen);
            after.clear();
            report.changes.push_back({ChangeKind::Moved, d, chosen->recompute, static_cast<int>(chosen->from),
                                      static_cast<int>(chosen->to)});
            any = true;
            --r;  // another instruction stands at r now
        }
    }
    return any;
}

// Per instruction of every device: the longest chain of work from its end to the end of the
// step in the current timeline (the device's later instructions and what the messages it sends
// start; receives take no time, sends hand on after the transfer). An instruction that ends
// earlier than the step by more than that lies on no longest path. Empty when the walk finds a
// cycle (it cannot: the timeline has none).
std::vector<std::vector<double>> RecomputeHider::chainsAfter() {
    std::vector<std::vector<double>> after(plan_.devices.size());
    for (std::size_t d = 0; d < after.size(); ++d) after[d].assign(plan_.devices[d].program.size(), 0.0);
    const bool whole = current_.walkFromEnd([&](int d, std::size_t i) {
        const auto& program = plan_.devices[d].program;
        auto own = [&](int device, std::size_t k) {
            const InstructionTiming& t = current_.timings(device)[k];
            return isCompute(plan_.devices[device].program[k].op) ? t.end - t.start : 0.0;
        };
        double longest = i + 1 < program.size() ? own(d, i + 1) + after[d][i + 1] : 0.0;
        if (const auto to = current_.handoff(d, i))
            longest = std::max(longest, to->ms + own(to->device, to->index) + after[to->device][to->index]);
        after[d][i] = longest;
    });
    if (!whole) after.clear();
    return after;
}

// The indices an R at r may move to (after the move), latest last: before each of the next few
// receives up to its backward, and right before the backward. Within a stretch without
// receives the latest place is the best one: everything after the R starts no later there, and
// it holds its activations for less. A move can only gain where it lets a message that some
// device waited for go earlier: what else it brings forward (this device's work up to the new
// place) reaches nothing else, and from the new place on the device is no earlier. So a place
// counts once such a send lies between the R and it, and a receive that waited before any such
// send ends the search (from there on the device starts when the data arrives, moved R or not).
std::vector<std::size_t> RecomputeHider::laterTargets(int d, std::size_t r) const {
    const auto& program = plan_.devices[d].program;
    const Instruction& ins = program[r];
    std::vector<std::size_t> targets;
    bool crossed = false;  // a message someone waits for is sent between the R and the place
    std::size_t receives = 0;
    for (std::size_t k = r + 1; k < program.size(); ++k) {
        const Instruction& at = program[k];
        const bool backward = isBackwardStart(at.op) && at.stage == ins.stage && at.microbatch == ins.microbatch;
        if (backward) {
            // Right before the backward, or before the overlapped pair it closes (never inside it).
            const std::size_t first = overlappedPairAt(program, k).value_or(k);
            if (crossed && first > r + 1) targets.push_back(first - 1);
            break;
        }
        if (crossed && isRecv(at.op) && receives++ < kLaterReceives)
            targets.push_back(k - 1);  // right before program[k], once the R is out of the way
        if (isRecv(at.op) && !crossed && waited(d, k)) return {};
        if (isSend(at.op))
            if (const auto to = current_.handoff(d, k)) crossed = crossed || waited(to->device, to->index);
    }
    return targets;
}

// The earliest receive from the device's cursor on that device d waited on and that an R
// later in the program could fill: its F stands before the receive, and its activations fit
// in the budget from the receive to where the R is now. Among those Rs, the first few after
// the receive (their backwards come first). Receives before the cursor gave all they had
// this round; the scan goes only as far as the first wait with a candidate.
std::optional<RecomputeHider::Move> RecomputeHider::firstEarlierMove(int d) {
    const auto& program = plan_.devices[d].program;
    const std::size_t n = program.size();
    const ProgramIndex& index = indexOf(d);
    const double budget = budgetOf(d);
    std::size_t firstR = cursor_[d];  // the first R at or after the receive
    for (std::size_t k = cursor_[d]; k < n; ++k) {
        if (!isRecv(program[k].op) || !waited(d, k)) continue;
        // The run of receives that k belongs to: an R goes before the first of them.
        std::size_t at = k;
        while (at > 0 && isRecv(program[at - 1].op)) --at;
        // The first few Rs at or after the receive, from the index of where Rs stand: walking
        // the program to them again for every wait was a sixth of hide on 32 × 2048 (issue 45).
        auto candidate = std::lower_bound(index.recomputes.begin(), index.recomputes.end(), std::max(firstR, k));
        firstR = candidate == index.recomputes.end() ? n : *candidate;
        for (std::size_t seen = 0; candidate != index.recomputes.end() && seen < kCandidatesPerWait;
             ++candidate, ++seen) {
            const std::size_t r = *candidate;
            const Instruction& ins = program[r];
            const std::int64_t forward = index.forwardAt.get(ins);
            if (forward < 0 || static_cast<std::size_t>(forward) >= at) continue;
            if (!tried_.insert(d, ins.stage, ins.microbatch, at)) continue;
            const StageCost& cost = plan_.stages[ins.stage].cost;
            const double extra = cost.activation_bytes - cost.checkpoint_bytes;
            const double peak = index.levels.peak(at, r);
            // A move that fills the budget exactly fits (Tolerance.h).
            if (!atMost(statics_[d] + peak + extra, budget)) continue;
            cursor_[d] = at;
            return Move{d, r, at, ins};
        }
    }
    cursor_[d] = n;
    return std::nullopt;
}

RecomputeHider::ProgramIndex& RecomputeHider::indexOf(int d) {
    ProgramIndex& index = indices_[d];
    if (index.fresh) return index;
    const auto& program = plan_.devices[d].program;
    index.levels = WindowPeaks(memoryLevels(plan_, program));
    index.forwardAt = StageMicrobatchTable(program, -1);
    index.recomputes.clear();
    for (std::size_t i = 0; i < program.size(); ++i) {
        if (program[i].op == Op::Forward) index.forwardAt.set(program[i], static_cast<std::int64_t>(i));
        if (program[i].op == Op::Recompute) index.recomputes.push_back(i);
    }
    index.fresh = true;
    return index;
}

// The R now at `to` came from `from`: the instructions between shifted by one, and hold the R's
// extra activations now (it moved earlier) or no longer (later).
void RecomputeHider::indexMoved(const Move& move) {
    ProgramIndex& index = indices_[move.device];
    if (!index.fresh) return;
    const auto& program = plan_.devices[move.device].program;
    const StageCost& cost = plan_.stages[move.recompute.stage].cost;
    const double extra = cost.activation_bytes - cost.checkpoint_bytes;
    std::vector<double>& levels = index.levels.edit();
    if (move.to < move.from) {
        for (std::size_t i = move.from; i > move.to; --i) levels[i] = levels[i - 1] + extra;
        levels[move.to] = (move.to > 0 ? levels[move.to - 1] : 0.0) + extra;
    } else {
        // After the R, at its new place, the level is what it was after the instruction it passed.
        for (std::size_t i = move.from; i < move.to; ++i) levels[i] = levels[i + 1] - extra;
    }
    const std::size_t first = std::min(move.from, move.to), last = std::max(move.from, move.to);
    index.levels.refresh(first, last + 1);
    // The Rs between shifted by one toward where the moved R was; it now stands at `to`.
    auto& rs = index.recomputes;
    rs.erase(std::lower_bound(rs.begin(), rs.end(), move.from));
    const auto lo = std::lower_bound(rs.begin(), rs.end(), first), hi = std::upper_bound(rs.begin(), rs.end(), last);
    for (auto it = lo; it != hi; ++it) *it = move.to < move.from ? *it + 1 : *it - 1;
    rs.insert(std::lower_bound(rs.begin(), rs.end(), move.to), move.to);
    for (std::size_t i = first; i <= last; ++i)
        if (program[i].op == Op::Forward) index.forwardAt.set(program[i], static_cast<std::int64_t>(i));
}

void RecomputeHider::apply(const Move& move) {
    rotateOne(plan_.devices[move.device].program, move.from, move.to);
    current_.moved(plan_, move.device, move.from, move.to);
}

void RecomputeHider::revert(const Move& move) {
    rotateOne(plan_.devices[move.device].program, move.to, move.from);
    current_.undo(plan_);
}

// Earlier moves never cost memory beyond the budget (checked when chosen), later ones free
// memory, so only time decides. Moving an R, which waits for nothing but its own device,
// cannot close a dependency cycle, so the timeline follows the moves incrementally
// (sim/IncrementalTimeline.h).
Result<bool> RecomputeHider::tryMoves(const std::vector<Move>& moves, std::optional<double> keepBelow) {
    const double before = current_.makespan();
    for (const Move& move : moves) apply(move);
    auto updated = current_.update(plan_, before + roundingOf(before, 0));
    ++simulations_;
    if (!updated) return updated.error();
    if (*updated && atMost(current_.makespan(), before) && (!keepBelow || atMost(current_.makespan(), *keepBelow)))
        return true;
    for (auto it = moves.rbegin(); it != moves.rend(); ++it)
        rotateOne(plan_.devices[it->device].program, it->to, it->from);
    current_.undo(plan_);
    return false;
}

Result<std::optional<double>> RecomputeHider::measure(const Move& move, double giveUpAbove) {
    apply(move);
    auto updated = current_.update(plan_, giveUpAbove);
    ++simulations_;
    if (!updated) return updated.error();
    const std::optional<double> step = *updated ? std::optional<double>(current_.makespan()) : std::nullopt;
    revert(move);
    return step;
}

}  // namespace mario
