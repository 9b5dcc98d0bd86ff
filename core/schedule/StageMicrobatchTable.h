#pragma once
// One number per (stage, micro-batch) pair of a device program: where its F stands, where its
// last R stands. The passes look these up for every instruction of every device, many times a
// run (hide on a 32 × 2048 plan: about a thousand scans of 28 000 instructions), and hash maps
// or trees of pairs spent a tenth of its time in their nodes (issue 45). A program names few
// stages and a run of micro-batches, so a table over those stages and that range is a few
// times the program's size; where it would be larger (hand-written plans with scattered
// numbers), a hash map. The stages are numbered by their rank on the device, not by their
// number: a Chimera or V device holds a stage of each end of the pipeline (0 and 63 of 64),
// and a table over every stage between them went to the hash map at 32 × 2048, a million
// nodes a run of hide's drops.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/schedule/Instruction.h"

namespace mario {

class StageMicrobatchTable {
public:
    StageMicrobatchTable() : empty_(-1) {}
    // Covers the pairs that the instructions of `program` name; every entry starts as `empty`.
    StageMicrobatchTable(const std::vector<Instruction>& program, std::int64_t empty) : empty_(empty) {
        bool any = false;
        for (const Instruction& ins : program) {
            if (!any) minStage_ = maxStage_ = ins.stage, minMicrobatch_ = maxMicrobatch_ = ins.microbatch;
            minStage_ = std::min(minStage_, std::int64_t(ins.stage));
            maxStage_ = std::max(maxStage_, std::int64_t(ins.stage));
            minMicrobatch_ = std::min(minMicrobatch_, std::int64_t(ins.microbatch));
            maxMicrobatch_ = std::max(maxMicrobatch_, std::int64_t(ins.microbatch));
            any = true;
        }
        if (!any) return;
        const std::int64_t limit = 4 * std::int64_t(program.size()) + 1024;
        if (maxStage_ - minStage_ + 1 > limit) return;  // scattered stage numbers: the hash map
        rank_.assign(static_cast<std::size_t>(maxStage_ - minStage_ + 1), -1);
        for (const Instruction& ins : program) rank_[static_cast<std::size_t>(ins.stage - minStage_)] = 0;
        std::int64_t stages = 0;
        for (std::int64_t& rank : rank_)
            if (rank == 0) rank = stages++;
        const std::int64_t cells = stages * (maxMicrobatch_ - minMicrobatch_ + 1);
        dense_ = cells <= limit;
        if (dense_) table_.assign(static_cast<std::size_t>(cells), empty);
    }

    std::int64_t get(const Instruction& ins) const {
        if (dense_) return inRange(ins) ? table_[cell(ins)] : empty_;
        const auto it = sparse_.find(stageMicrobatchKey(ins));
        return it == sparse_.end() ? empty_ : it->second;
    }
    // `ins` names a pair of the program the table was made for.
    void set(const Instruction& ins, std::int64_t value) {
        if (dense_) table_[cell(ins)] = value;
        else sparse_[stageMicrobatchKey(ins)] = value;
    }

private:
    bool inRange(const Instruction& ins) const {
        return ins.stage >= minStage_ && ins.stage <= maxStage_ && ins.microbatch >= minMicrobatch_ &&
               ins.microbatch <= maxMicrobatch_ && rank_[static_cast<std::size_t>(ins.stage - minStage_)] >= 0;
    }
    std::size_t cell(const Instruction& ins) const {
        return static_cast<std::size_t>(rank_[static_cast<std::size_t>(ins.stage - minStage_)] *
                                            (maxMicrobatch_ - minMicrobatch_ + 1) +
                                        (ins.microbatch - minMicrobatch_));
    }

    std::int64_t empty_;
    bool dense_ = false;
    std::int64_t minStage_ = 0, maxStage_ = -1, minMicrobatch_ = 0, maxMicrobatch_ = -1;
    std::vector<std::int64_t> rank_;  // per stage number in [minStage_, maxStage_]: its rank, or -1
    std::vector<std::int64_t> table_;
    std::unordered_map<std::uint64_t, std::int64_t> sparse_;
};

}  // namespace mario
