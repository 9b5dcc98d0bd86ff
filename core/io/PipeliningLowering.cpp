#include "core/io/PipeliningLowering.h"

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>

namespace mario {
namespace {

// An instruction as a set key: stages fit in 24 bits (limits::kMaxStages is 65536).
std::uint64_t keyOf(Op op, int stage, int microbatch) {
    return (static_cast<std::uint64_t>(op) << 56) | (static_cast<std::uint64_t>(stage & 0xFFFFFF) << 32) |
           static_cast<std::uint32_t>(microbatch);
}

bool countsTowardGradients(Op op) { return op == Op::Backward || op == Op::BackwardWeight; }

// _add_reduce_grad: REDUCE_GRAD right after the action that brings its stage's count of full
// and weight backwards to the number of micro-batches (I never counts).
std::deque<Instruction> withReduceGrad(const std::vector<Instruction>& computations, int microbatches) {
    std::deque<Instruction> out;
    std::vector<int> counted;
    for (const Instruction& ins : computations) {
        out.push_back(ins);
        if (!countsTowardGradients(ins.op) || ins.stage < 0) continue;
        if (static_cast<std::size_t>(ins.stage) >= counted.size()) counted.resize(ins.stage + 1, 0);
        if (++counted[ins.stage] == microbatches) out.push_back({Op::ReduceGrad, ins.stage, -1});
    }
    return out;
}

class SendRecvLowering {
public:
    SendRecvLowering(const std::vector<int>& stageRank, std::size_t ranks)
        : stageRank_(stageRank), last_(static_cast<int>(stageRank.size()) - 1), out_(ranks), seen_(ranks) {}

    Result<std::vector<std::vector<Instruction>>> run(std::vector<std::deque<Instruction>> pending) {
        for (bool left = true; left;) {
            left = false;
            bool progress = false;
            for (std::size_t r = 0; r < pending.size(); ++r) {
                if (pending[r].empty()) continue;
                left = true;
                // An overlapped pair goes as one action: both halves ready, both sends after.
                const Instruction ins = pending[r].front();
                const bool pair = ins.overlapped && pending[r].size() > 1;
                if (!ready(ins, r) || (pair && !ready(pending[r][1], r))) continue;
                const std::size_t count = pair ? 2 : 1;
                for (std::size_t k = 0; k < count; ++k) emit(r, pending[r][k]);
                for (std::size_t k = 0; k < count; ++k) sendAfter(r, pending[r][k]);
                pending[r].erase(pending[r].begin(), pending[r].begin() + static_cast<std::ptrdiff_t>(count));
                progress = true;
            }
            if (left && !progress) return makeError(stuckMessage(pending));
        }
        return std::move(out_);
    }

private:
    int rankOf(int stage) const { return stageRank_[stage]; }
    bool has(std::size_t rank, Op op, int stage, int microbatch) const {
        return seen_[rank].count(keyOf(op, stage, microbatch)) > 0;
    }
    void emit(std::size_t rank, const Instruction& ins) {
        out_[rank].push_back(ins);
        seen_[rank].insert(keyOf(ins.op, ins.stage, ins.microbatch));
    }

    // Its input is on this rank: received, or made here by the neighbouring stage (the V's turn).
    bool ready(const Instruction& ins, std::size_t rank) const {
        const int s = ins.stage, m = ins.microbatch;
        if (ins.op == Op::Forward && s != 0)
            return has(rank, Op::RecvForward, s, m) || has(rank, Op::Forward, s - 1, m);
        if (isBackwardStart(ins.op) && s != last_)
            return has(rank, Op::RecvBackward, s, m) || has(rank, Op::BackwardInput, s + 1, m) ||
                   has(rank, Op::Backward, s + 1, m);
        return true;
    }

    void sendAfter(std::size_t rank, const Instruction& ins) {
        const int s = ins.stage, m = ins.microbatch;
        if (ins.op == Op::Forward && s != last_ && rankOf(s + 1) != rankOf(s)) {
            emit(rank, {Op::SendForward, s, m});
            emit(static_cast<std::size_t>(rankOf(s + 1)), {Op::RecvForward, s + 1, m});
        } else if (isBackwardStart(ins.op) && s != 0 && rankOf(s - 1) != rankOf(s)) {
            emit(rank, {Op::SendBackward, s, m});
            emit(static_cast<std::size_t>(rankOf(s - 1)), {Op::RecvBackward, s - 1, m});
        }
    }

    static std::string stuckMessage(const std::vector<std::deque<Instruction>>& pending) {
        std::string waiting;
        for (std::size_t r = 0; r < pending.size(); ++r) {
            if (pending[r].empty()) continue;
            if (!waiting.empty()) waiting += ", ";
            waiting += "rank " + std::to_string(r) + " at " + toActionString(pending[r].front());
        }
        return "PyTorch's lowering cannot place the sends and receives: no rank can go on (" + waiting + ")";
    }

    const std::vector<int>& stageRank_;
    const int last_;
    std::vector<std::vector<Instruction>> out_;
    std::vector<std::unordered_set<std::uint64_t>> seen_;
};

}  // namespace

Result<std::vector<std::vector<Instruction>>> lowerLikePyTorch(const ComputeOrder& order,
                                                               const std::vector<int>& stageRank, int microbatches) {
    for (std::size_t r = 0; r < order.size(); ++r)
        for (const Instruction& ins : order[r])
            if (ins.stage < 0 || ins.stage >= static_cast<int>(stageRank.size()) ||
                stageRank[ins.stage] != static_cast<int>(r))
                return makeError(toActionString(ins) + " stands on rank " + std::to_string(r) +
                                 ", which does not hold its stage");
    std::vector<std::deque<Instruction>> pending;
    for (const auto& computations : order) pending.push_back(withReduceGrad(computations, microbatches));
    return SendRecvLowering(stageRank, order.size()).run(std::move(pending));
}

}  // namespace mario
