#include "core/io/PipeliningLowering.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>

namespace mario {
namespace {

// A cell of a lowered program: an instruction, or PyTorch's wait that retires one (a send,
// or a stage's REDUCE_GRAD).
struct Cell {
    Instruction ins;
    bool wait = false;
};

std::string textOf(const Cell& cell) {
    if (!cell.wait) return toActionString(cell.ins);
    const std::string stage = std::to_string(cell.ins.stage);
    if (cell.ins.op == Op::ReduceGrad) return stage + "WAIT_REDUCE_GRAD";
    return stage + (cell.ins.op == Op::SendForward ? "WAIT_SEND_F" : "WAIT_SEND_B") +
           std::to_string(cell.ins.microbatch);
}

// An instruction as a set key: stages fit in 24 bits (limits::kMaxStages is 65536).
std::uint64_t keyOf(Op op, int stage, int microbatch) {
    return (static_cast<std::uint64_t>(op) << 56) | (static_cast<std::uint64_t>(stage & 0xFFFFFF) << 32) |
           static_cast<std::uint32_t>(microbatch);
}

bool countsTowardGradients(Op op) { return op == Op::Backward || op == Op::BackwardWeight; }

// _add_reduce_grad: REDUCE_GRAD right after the action that brings its stage's count of full
// and weight backwards to the number of micro-batches (I never counts), and its wait right
// after it (PyTorch's default; each takes its own turn in _add_send_recv's round robin).
std::deque<Cell> withReduceGrad(const std::vector<Instruction>& computations, int microbatches) {
    std::deque<Cell> out;
    std::vector<int> counted;
    for (const Instruction& ins : computations) {
        out.push_back({ins});
        if (!countsTowardGradients(ins.op) || ins.stage < 0) continue;
        if (static_cast<std::size_t>(ins.stage) >= counted.size()) counted.resize(ins.stage + 1, 0);
        if (++counted[ins.stage] == microbatches) {
            out.push_back({{Op::ReduceGrad, ins.stage, -1}});
            out.push_back({{Op::ReduceGrad, ins.stage, -1}, true});
        }
    }
    return out;
}

// _add_wait_send: a forward's send is retired (WAIT_SEND_F) right after the backward (B or I)
// of the same stage and micro-batch on this rank, which proves the peer consumed it; every
// other send at the end, in the order sent.
std::vector<Cell> withSendWaits(const std::vector<Cell>& cells) {
    std::vector<Cell> out;
    std::vector<Instruction> pending;  // sends not yet retired, in send order
    for (const Cell& cell : cells) {
        out.push_back(cell);
        if (cell.wait) continue;
        if (isSend(cell.ins.op)) pending.push_back(cell.ins);
        if (!isBackwardStart(cell.ins.op)) continue;
        const auto sent = std::find(pending.begin(), pending.end(),
                                    Instruction{Op::SendForward, cell.ins.stage, cell.ins.microbatch});
        if (sent == pending.end()) continue;
        out.push_back({*sent, true});
        pending.erase(sent);
    }
    for (const Instruction& send : pending) out.push_back({send, true});
    return out;
}

class SendRecvLowering {
public:
    SendRecvLowering(const std::vector<int>& stageRank, std::size_t ranks)
        : stageRank_(stageRank), last_(static_cast<int>(stageRank.size()) - 1), out_(ranks), seen_(ranks) {}

    Result<std::vector<std::vector<Cell>>> run(std::vector<std::deque<Cell>> pending) {
        for (bool left = true; left;) {
            left = false;
            bool progress = false;
            for (std::size_t r = 0; r < pending.size(); ++r) {
                if (pending[r].empty()) continue;
                left = true;
                // An overlapped pair goes as one action: both halves ready, both sends after.
                const Cell cell = pending[r].front();
                const bool pair = !cell.wait && cell.ins.overlapped && pending[r].size() > 1;
                if (!ready(cell, r) || (pair && !ready(pending[r][1], r))) continue;
                const std::size_t count = pair ? 2 : 1;
                for (std::size_t k = 0; k < count; ++k) emit(r, pending[r][k]);
                for (std::size_t k = 0; k < count; ++k)
                    if (!pending[r][k].wait) sendAfter(r, pending[r][k].ins);
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
    void emit(std::size_t rank, const Cell& cell) {
        out_[rank].push_back(cell);
        if (!cell.wait) seen_[rank].insert(keyOf(cell.ins.op, cell.ins.stage, cell.ins.microbatch));
    }

    // Its input is on this rank: received, or made here by the neighbouring stage (the V's turn).
    // A wait is always ready.
    bool ready(const Cell& cell, std::size_t rank) const {
        if (cell.wait) return true;
        const Instruction& ins = cell.ins;
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
            emit(rank, {{Op::SendForward, s, m}});
            emit(static_cast<std::size_t>(rankOf(s + 1)), {{Op::RecvForward, s + 1, m}});
        } else if (isBackwardStart(ins.op) && s != 0 && rankOf(s - 1) != rankOf(s)) {
            emit(rank, {{Op::SendBackward, s, m}});
            emit(static_cast<std::size_t>(rankOf(s - 1)), {{Op::RecvBackward, s - 1, m}});
        }
    }

    static std::string stuckMessage(const std::vector<std::deque<Cell>>& pending) {
        std::string waiting;
        for (std::size_t r = 0; r < pending.size(); ++r) {
            if (pending[r].empty()) continue;
            if (!waiting.empty()) waiting += ", ";
            waiting += "rank " + std::to_string(r) + " at " + textOf(pending[r].front());
        }
        return "PyTorch's lowering cannot place the sends and receives: no rank can go on (" + waiting + ")";
    }

    const std::vector<int>& stageRank_;
    const int last_;
    std::vector<std::vector<Cell>> out_;
    std::vector<std::unordered_set<std::uint64_t>> seen_;
};

}  // namespace

Result<std::vector<std::vector<std::string>>> lowerLikePyTorch(const ComputeOrder& order,
                                                               const std::vector<int>& stageRank, int microbatches) {
    for (std::size_t r = 0; r < order.size(); ++r)
        for (const Instruction& ins : order[r])
            if (ins.stage < 0 || ins.stage >= static_cast<int>(stageRank.size()) ||
                stageRank[ins.stage] != static_cast<int>(r))
                return makeError(toActionString(ins) + " stands on rank " + std::to_string(r) +
                                 ", which does not hold its stage");
    std::vector<std::deque<Cell>> pending;
    for (const auto& computations : order) pending.push_back(withReduceGrad(computations, microbatches));
    auto lowered = SendRecvLowering(stageRank, order.size()).run(std::move(pending));
    if (!lowered) return lowered.error();
    // The cells as text; an overlapped pair (two instructions in a row) becomes one
    // OVERLAP_F_B cell, as toProgramEntries writes it. Waits never split a pair.
    std::vector<std::vector<std::string>> cells;
    for (const auto& program : *lowered) {
        std::vector<std::string>& row = cells.emplace_back();
        std::vector<Instruction> run;
        auto flush = [&] {
            for (std::string& entry : toProgramEntries(run)) row.push_back(std::move(entry));
            run.clear();
        };
        for (const Cell& cell : withSendWaits(program)) {
            if (!cell.wait) {
                run.push_back(cell.ins);
                continue;
            }
            flush();
            row.push_back(textOf(cell));
        }
        flush();
    }
    return cells;
}

}  // namespace mario
