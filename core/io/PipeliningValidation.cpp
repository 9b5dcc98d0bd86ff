#include "core/io/PipeliningValidation.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

namespace mario {
namespace {

using Kind = PipeliningCsvAction::Kind;

std::string lineOf(int rank) { return "line " + std::to_string(rank + 1); }
std::string where(int rank, int column) { return lineOf(rank) + ", column " + std::to_string(column) + ": "; }
// "line 1, column 4 (3F0)"
std::string cellName(int rank, const PipeliningCsvAction& action) {
    return lineOf(rank) + ", column " + std::to_string(action.column) + " (" + action.text() + ")";
}

// Where each of a (stage, micro-batch)'s computations stands in its rank's action list, -1
// when absent. Each stage lives on one rank (inferStageRanks checks that first), so one
// table for the whole file is a table per rank.
class ComputePositions {
public:
    static constexpr int kKinds = 5;  // Op values 0..4: F, R, B, I, W
    using Slots = std::array<int, kKinds>;

    Slots& at(int stage, int microbatch) {
        auto [it, inserted] = slots_.try_emplace(stageMicrobatchKey(stage, microbatch));
        if (inserted) it->second.fill(-1);
        return it->second;
    }
    const Slots& get(int stage, int microbatch) const { return slots_.at(stageMicrobatchKey(stage, microbatch)); }

private:
    std::unordered_map<std::uint64_t, Slots> slots_;
};

int slotOf(Op op) { return static_cast<int>(op); }

// The order checks of one rank's computations against the full table of positions.
class OrderChecker {
public:
    OrderChecker(const std::vector<PipeliningCsvAction>& actions, int rank, const ComputePositions::Slots& slots)
        : actions_(actions), rank_(rank), slots_(slots) {}

    // The problem with the action at `index`, or an empty string.
    std::string check(int index) const {
        const Instruction& ins = actions_[index].instruction;
        const int f = slot(Op::Forward), b = slot(Op::Backward), i = slot(Op::BackwardInput),
                  w = slot(Op::BackwardWeight);
        switch (ins.op) {
            case Op::Forward:
                if (b < 0 && i < 0) return has("a forward", index) + " but no backward";
                return {};
            case Op::Recompute:
                if (f < 0 || f > index)
                    return where(rank_, actions_[index].column) + actions_[index].text() + " recomputes " +
                           toActionString({Op::Forward, ins.stage, ins.microbatch}) + ", which has not run";
                if (b >= 0 && b < index) return before(b, index);
                if (i >= 0 && i < index) return before(i, index);
                return {};
            case Op::Backward:
            case Op::BackwardInput:
                if (f < 0) return has("a backward", index) + " but no forward";
                if (f > index) return before(index, f) + ", its forward";
                if (ins.op == Op::BackwardInput && b >= 0)
                    return has("a full backward", b) + " and " + cell("an I", index);
                if (ins.op == Op::BackwardInput && w < 0) return has("an I", index) + " but no W";
                return {};
            case Op::BackwardWeight:
                if (i < 0 && b >= 0 && b < index)
                    return where(rank_, actions_[index].column) + actions_[index].text() +
                           " follows the full backward " + actions_[b].text() + " (column " +
                           std::to_string(actions_[b].column) +
                           "), which already computed the weight gradient; W goes with I";
                if (i < 0) return has("a W", index) + " but no I";
                if (i > index) return before(index, i) + ", its I";
                return {};
            default: return {};
        }
    }

private:
    int slot(Op op) const { return slots_[slotOf(op)]; }
    // "a backward (column 9, 1B3)"
    std::string cell(const char* what, int index) const {
        return std::string(what) + " (column " + std::to_string(actions_[index].column) + ", " +
               actions_[index].text() + ")";
    }
    // "line 2: stage 1 micro-batch 3 has a backward (column 9, 1B3)"
    std::string has(const char* what, int index) const {
        const Instruction& ins = actions_[index].instruction;
        return lineOf(rank_) + ": stage " + std::to_string(ins.stage) + " micro-batch " +
               std::to_string(ins.microbatch) + " has " + cell(what, index);
    }
    // "line 1, column 3: 0B0 comes before 0F0 (column 5)"
    std::string before(int early, int late) const {
        return where(rank_, actions_[early].column) + actions_[early].text() + " comes before " +
               actions_[late].text() + " (column " + std::to_string(actions_[late].column) + ")";
    }

    const std::vector<PipeliningCsvAction>& actions_;
    int rank_;
    const ComputePositions::Slots& slots_;
};

// Every chain's stages run the same micro-batches forward; names a stage that lacks one.
Result<bool> checkForwardSets(const PipeliningCsv& csv, const std::vector<std::vector<int>>& chains,
                              const std::vector<int>& stageRank) {
    std::vector<std::vector<int>> forwards(stageRank.size());
    for (const auto& rank : csv.ranks)
        for (const auto& action : rank)
            if (action.kind == Kind::Compute && action.instruction.op == Op::Forward)
                forwards[action.instruction.stage].push_back(action.instruction.microbatch);
    for (auto& set : forwards) std::sort(set.begin(), set.end());
    // PyTorch's runtime takes micro-batch m as the m-th chunk of the batch, and Mario numbers
    // them densely too: 0..M-1, none skipped.
    std::vector<int> numbers;
    for (const auto& set : forwards) numbers.insert(numbers.end(), set.begin(), set.end());
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    for (int k = 0; k < static_cast<int>(numbers.size()); ++k) {
        if (numbers[k] == k) continue;
        const auto stage = std::find_if(forwards.begin(), forwards.end(), [&](const std::vector<int>& set) {
            return std::binary_search(set.begin(), set.end(), numbers[k]);
        });
        const int s = static_cast<int>(stage - forwards.begin());
        return makeError("no stage runs micro-batch " + std::to_string(k) + " forward, but stage " + std::to_string(s) +
                         " (" + lineOf(stageRank[s]) + ") runs micro-batch " + std::to_string(numbers[k]) +
                         "; micro-batches are numbered 0..M-1");
    }
    for (const auto& chain : chains) {
        std::vector<int> all;
        for (int s : chain) all.insert(all.end(), forwards[s].begin(), forwards[s].end());
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        for (int s : chain) {
            if (forwards[s].size() == all.size()) continue;
            const auto [lacking, _] = std::mismatch(all.begin(), all.end(), forwards[s].begin(), forwards[s].end());
            const int m = *lacking;
            const int runner = *std::find_if(chain.begin(), chain.end(), [&](int t) {
                return std::binary_search(forwards[t].begin(), forwards[t].end(), m);
            });
            return makeError("stage " + std::to_string(s) + " (" + lineOf(stageRank[s]) +
                             ") has no forward for micro-batch " + std::to_string(m) + ", which stage " +
                             std::to_string(runner) + " (" + lineOf(stageRank[runner]) + ") runs");
        }
    }
    return true;
}

}  // namespace

Result<std::vector<int>> inferStageRanks(const PipeliningCsv& csv) {
    struct Sighting {
        int rank;
        const PipeliningCsvAction* action;
    };
    // PyTorch records the rank of every action's stage, communication and FSDP included.
    std::map<int, Sighting> first;
    for (int r = 0; r < static_cast<int>(csv.ranks.size()); ++r)
        for (const auto& action : csv.ranks[r]) {
            const auto [it, inserted] = first.try_emplace(action.instruction.stage, Sighting{r, &action});
            if (inserted || it->second.rank == r) continue;
            return makeError(where(r, action.column) + action.text() + " puts stage " +
                             std::to_string(action.instruction.stage) + " on rank " + std::to_string(r) + ", but " +
                             cellName(it->second.rank, *it->second.action) + " put it on rank " +
                             std::to_string(it->second.rank) + "; a stage runs on one rank");
        }
    if (first.empty()) return makeError("the file holds no actions");
    std::vector<int> stageRank;
    for (const auto& [stage, sighting] : first) {
        const int expected = static_cast<int>(stageRank.size());
        if (stage != expected)
            return makeError("no action names stage " + std::to_string(expected) + ", but " +
                             cellName(sighting.rank, *sighting.action) + " names stage " + std::to_string(stage) +
                             "; stages are numbered 0..S-1");
        stageRank.push_back(sighting.rank);
    }
    return stageRank;
}

Result<bool> checkPipeliningOrder(const PipeliningCsv& csv, const std::vector<int>& stageRank,
                                  const std::vector<std::vector<int>>& chains) {
    if (csv.count(Kind::Compute) == 0) return makeError("the file holds no computations (F, B, I or W)");
    ComputePositions positions;
    for (int r = 0; r < static_cast<int>(csv.ranks.size()); ++r) {
        const auto& actions = csv.ranks[r];
        for (int i = 0; i < static_cast<int>(actions.size()); ++i) {
            if (actions[i].kind != Kind::Compute) continue;
            const Instruction& ins = actions[i].instruction;
            int& slot = positions.at(ins.stage, ins.microbatch)[slotOf(ins.op)];
            if (slot >= 0)
                return makeError(lineOf(r) + ": " + actions[i].text() + " appears twice (columns " +
                                 std::to_string(actions[slot].column) + " and " + std::to_string(actions[i].column) +
                                 ")");
            slot = i;
        }
    }
    for (int r = 0; r < static_cast<int>(csv.ranks.size()); ++r) {
        const auto& actions = csv.ranks[r];
        for (int i = 0; i < static_cast<int>(actions.size()); ++i) {
            if (actions[i].kind != Kind::Compute) continue;
            const Instruction& ins = actions[i].instruction;
            const std::string problem = OrderChecker(actions, r, positions.get(ins.stage, ins.microbatch)).check(i);
            if (!problem.empty()) return makeError(problem);
        }
    }
    for (const auto& chain : chains)
        for (int s : chain)
            if (s < 0 || s >= static_cast<int>(stageRank.size()))
                return makeError("the chains name stage " + std::to_string(s) + "; the file has stages 0.." +
                                 std::to_string(stageRank.size() - 1));
    return checkForwardSets(csv, chains, stageRank);
}

}  // namespace mario
