// Beyond the paper — bound-w. Zero-bubble schedules defer weight gradients (W) into the
// bubbles; between its I and its W a micro-batch keeps what the weight gradients need
// (weight_grad_bytes), and checkpointing does not shrink that. With checkpointing, the device
// that defers most Ws then peaks far above the others (LLaMA-2 13B, ZB-H1 on 8 devices: 125
// GB against 52 GB for 1F1B). This pass pulls Ws earlier, where a device would otherwise pass
// the budget, and leaves the other deferrals alone.
//
// Memory depends only on program order (sim/ProgramMemory.h), so the pass needs no
// simulation: walk the running sum, and at the first instruction above the budget move the
// oldest pending W (its I ran, its W is still ahead) in front of that instruction, as the
// zero-bubble schedulers' own W queues would run it. Repeat until the device fits or no W is
// pending there.
//
// One forward walk per device, O(n log n): everything in front of the instruction that passed
// the budget is final (a W moved there only lowers the sum), so the walk never goes back more
// than the one forward of an overlapped pair. The running sum is added up in program order
// exactly as memoryLevels() would after each move, so the result is the same, bit for bit, as
// recomputing the levels after every move (tests/core/bound_w_reference_test.cpp keeps that
// quadratic form as the reference). Rescanning cost 65 s at 8192 micro-batches (issue 30).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "core/passes/Passes.h"
#include "core/sim/ProgramMemory.h"

namespace mario {
namespace {

constexpr double kSlack = 1e-6;  // bytes: sums in another order differ in their last bits

// How many positions below i are marked: the report's "from" index, in O(log n).
class MarkedCount {
public:
    explicit MarkedCount(std::size_t size) : tree_(size + 1, 0) {}
    void mark(std::size_t i) {
        for (++i; i < tree_.size(); i += i & (~i + 1)) ++tree_[i];
    }
    std::size_t below(std::size_t i) const {
        std::size_t count = 0;
        for (; i > 0; i -= i & (~i + 1)) count += tree_[i];
        return count;
    }

private:
    std::vector<std::size_t> tree_;
};

// The Ws of one (stage, micro-batch), in program order, and when its first I ran.
struct KeyWeights {
    std::vector<std::size_t> weights;  // positions in the input program
    std::size_t head = 0;              // the ones before it are gone (ran or moved)
    bool inputSeen = false;
};

// One device's walk. The program is the finished prefix `out_` followed by what is left of the
// input program (`original_` from `next_` on, minus the Ws already moved), with at most one
// overlapped forward pushed back in front of it (`pushedBack_`).
class WeightWalk {
public:
    WeightWalk(const Plan& plan, std::vector<Instruction> program, double room, int device, PassReport& report)
        : original_(std::move(program)),
          deltas_(memoryDeltas(plan, original_)),  // Ws moving never reorders an F and its R
          room_(room), device_(device), report_(report), taken_(original_.size(), false),
          gone_(original_.size(), false), takenCount_(original_.size()) {
        keyOf_.reserve(original_.size());
        for (std::size_t i = 0; i < original_.size(); ++i) {
            const auto [slot, added] = keyIndex_.emplace(stageMicrobatchKey(original_[i]), keys_.size());
            if (added) keys_.emplace_back();
            keyOf_.push_back(slot->second);
            if (original_[i].op == Op::BackwardWeight) keys_[slot->second].weights.push_back(i);
        }
    }

    std::vector<Instruction> run() {
        while (const auto x = peek()) {
            const double level = running_ + deltas_[*x];
            if (level > room_ + kSlack && !moveWeightBefore(*x)) break;
            if (level > room_ + kSlack) continue;  // the moved W stands in front of x now: look again
            emit(*x, level);
        }
        // Nothing more to do, or nothing pending that could help: the rest stays as it was.
        while (const auto x = peek()) emit(*x, 0);
        return std::move(out_);
    }

private:
    // The next position of the input program to walk: the pushed-back forward, or the next
    // one not moved away.
    std::optional<std::size_t> peek() {
        if (pushedBack_) return pushedBack_;
        while (next_ < original_.size() && taken_[next_]) ++next_;
        if (next_ < original_.size()) return next_;
        return std::nullopt;
    }

    void emit(std::size_t x, double level) {
        if (pushedBack_) pushedBack_.reset();
        else ++next_;
        const Instruction& ins = original_[x];
        if (ins.op == Op::BackwardWeight) gone_[x] = true;
        if (ins.op == Op::BackwardInput && !keys_[keyOf_[x]].inputSeen) {
            keys_[keyOf_[x]].inputSeen = true;
            inputOrder_.push_back(keyOf_[x]);
        }
        out_.push_back(ins);
        source_.push_back(x);
        levels_.push_back(level);
        running_ = level;
    }

    // The pending W whose I ran first; among Ws of one key, the first. Keys leave the queue
    // once all their Ws are gone, and never come back. x itself is never a candidate: costs are
    // never negative (every reader checks), so a W never raises the sum and can pass the
    // budget only first in the program, where no I stands before it.
    std::optional<std::size_t> oldestPendingWeight() {
        for (; inputHead_ < inputOrder_.size(); ++inputHead_) {
            KeyWeights& key = keys_[inputOrder_[inputHead_]];
            while (key.head < key.weights.size() && gone_[key.weights[key.head]]) ++key.head;
            if (key.head < key.weights.size()) return key.weights[key.head];
        }
        return std::nullopt;
    }

    // x passed the budget: move the oldest pending W in front of it, or in front of the
    // overlapped pair it closes. False when no W is pending.
    bool moveWeightBefore(std::size_t x) {
        const auto from = oldestPendingWeight();
        if (!from) return false;
        const std::size_t above = out_.size();
        const std::size_t fromIndex =
            above + (pushedBack_ ? 1 : 0) + (*from - next_) - (takenCount_.below(*from) - takenCount_.below(next_));
        // Where x opens a pair, the W goes in front of x, as anywhere else; where x closes one
        // (an I that adds memory: weight_grad_bytes above activation_bytes), in front of its F.
        const bool closesPair = !out_.empty() && out_.back().overlapped && out_.back().op == Op::Forward &&
                                canCloseOverlap(original_[x].op);
        std::size_t to = above;
        if (closesPair) {
            // The pair's forward goes back into the walk, behind the moved W.
            --to;
            pushedBack_ = source_.back();
            out_.pop_back();
            source_.pop_back();
            levels_.pop_back();
            running_ = levels_.empty() ? 0.0 : levels_.back();
        }
        taken_[*from] = true;
        gone_[*from] = true;
        takenCount_.mark(*from);
        const Instruction& weight = original_[*from];
        report_.changes.push_back(
            {ChangeKind::Moved, device_, weight, static_cast<int>(fromIndex), static_cast<int>(to)});
        const double level = running_ + deltas_[*from];
        out_.push_back(weight);
        source_.push_back(*from);
        levels_.push_back(level);
        running_ = level;
        return true;
    }

    const std::vector<Instruction> original_;
    const std::vector<double> deltas_;
    const double room_;
    const int device_;
    PassReport& report_;

    std::vector<Instruction> out_;     // the finished prefix of the new program
    std::vector<std::size_t> source_;  // where each of out_ stood in original_
    std::vector<double> levels_;       // the running sum after each of out_
    double running_ = 0;
    std::size_t next_ = 0;
    std::optional<std::size_t> pushedBack_;

    std::vector<bool> taken_;  // moved into out_ ahead of their turn
    std::vector<bool> gone_;   // Ws that ran or moved: no longer pending
    MarkedCount takenCount_;
    std::unordered_map<std::uint64_t, std::size_t> keyIndex_;
    std::vector<std::size_t> keyOf_;
    std::vector<KeyWeights> keys_;
    std::vector<std::size_t> inputOrder_;  // keys in the order their first I ran
    std::size_t inputHead_ = 0;
};

}  // namespace

PassReport boundWeightGradients(Plan& plan, const std::vector<double>& budget) {
    PassReport report{PassId::BoundW, 0, {}};
    const std::vector<double> statics = staticBytesPerDevice(plan);
    for (auto& device : plan.devices) {
        if (static_cast<std::size_t>(device.index) >= budget.size()) continue;
        const double room = budget[device.index] - statics[device.index];
        device.program = WeightWalk(plan, std::move(device.program), room, device.index, report).run();
    }
    return report;
}

}  // namespace mario
