#include "core/io/PipeliningImport.h"

#include <algorithm>

#include "core/io/PipeliningValidation.h"
#include "core/schedule/Communication.h"

namespace mario {
namespace {

using Kind = PipeliningCsvAction::Kind;

std::string lineOf(int rank) { return "line " + std::to_string(rank + 1); }

// "1 cell", "3 cells"
std::string amount(int count, const std::string& noun) {
    return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::vector<std::string> notesOf(const PipeliningCsv& csv) {
    std::vector<std::string> notes;
    if (csv.unpaired_overlap_cells > 0)
        notes.push_back(amount(csv.unpaired_overlap_cells, "OVERLAP_F_B cell") +
                        " not of one forward and one backward: their parts run one after the other");
    if (const int fsdp = csv.count(Kind::Unshard) + csv.count(Kind::Reshard); fsdp > 0)
        notes.push_back(amount(fsdp, "UNSHARD/RESHARD action") + " dropped (FSDP; they cost nothing in Mario)");
    if (const int comms = csv.count(Kind::Communication); comms > 0)
        notes.push_back(amount(comms, "communication cell") +
                        " (SEND_F, RECV_F, SEND_B, RECV_B) dropped: Mario adds communication "
                        "from the compute order");
    if (const int waits = csv.count(Kind::Wait); waits > 0)
        notes.push_back(amount(waits, "wait cell") +
                        " (WAIT_SEND_F, WAIT_SEND_B, WAIT_REDUCE_GRAD) dropped: Mario's sends and reductions "
                        "need no separate wait");
    if (const int sync = csv.count(Kind::Gradient); sync > 0)
        notes.push_back(amount(sync, "REDUCE_GRAD cell") + " dropped: the plan adds its own gradient synchronisation");
    return notes;
}

Result<ImportedPipeliningPlan> build(const PipeliningCsv& csv, const std::vector<int>& stageRank, Plan plan,
                                     std::vector<std::string> notes) {
    if (auto ordered = checkPipeliningOrder(csv, stageRank, plan.chains()); !ordered) return ordered.error();
    auto built = planFromComputeOrder(std::move(plan), csv.computeOrder());
    if (!built) return built.error();
    ImportedPipeliningPlan imported{std::move(*built), std::move(notes)};
    for (auto& note : notesOf(csv)) imported.notes.push_back(std::move(note));
    return imported;
}

}  // namespace

StageCost unitImportCost() {
    StageCost cost;
    cost.forward_ms = 1;
    cost.backward_ms = 2;
    cost.recompute_ms = 1;
    cost.activation_bytes = 1000;
    cost.checkpoint_bytes = 10;
    return cost;
}

Result<ImportedPipeliningPlan> importPipeliningCsv(const PipeliningCsv& csv, const std::string& name) {
    auto stageRank = inferStageRanks(csv);
    if (!stageRank) return stageRank.error();
    Plan plan;
    plan.info.name = name;
    plan.info.scheme = "imported";
    for (int s = 0; s < static_cast<int>(stageRank->size()); ++s)
        plan.stages.push_back(StageSpec{s, (*stageRank)[s], unitImportCost(), {}});
    for (int r = 0; r < static_cast<int>(csv.ranks.size()); ++r) plan.devices.push_back({r, {}});
    return build(csv, *stageRank, std::move(plan),
                 {"unit costs: forward 1 ms, backward 2 ms (I and W 1 ms each), recompute 1 ms, "
                  "1000 bytes of activations per micro-batch and stage"});
}

Result<ImportedPipeliningPlan> importPipeliningCsv(const PipeliningCsv& csv, Plan skeleton,
                                                   const std::string& skeletonName) {
    auto stageRank = inferStageRanks(csv);
    if (!stageRank) return stageRank.error();
    if (csv.ranks.size() != skeleton.devices.size())
        return makeError(std::to_string(csv.ranks.size()) + " ranks (lines), but " + skeletonName + " has " +
                         std::to_string(skeleton.devices.size()) + " devices");
    if (stageRank->size() != skeleton.stages.size())
        return makeError(std::to_string(stageRank->size()) + " stages, but " + skeletonName + " has " +
                         std::to_string(skeleton.stages.size()));
    for (const StageSpec& stage : skeleton.stages) {
        if (stage.index < 0 || stage.index >= static_cast<int>(stageRank->size()))
            return makeError(skeletonName + ": stage index " + std::to_string(stage.index) + " is not one of 0.." +
                             std::to_string(stageRank->size() - 1));
        const int rank = (*stageRank)[stage.index];
        if (rank != stage.device)
            return makeError("stage " + std::to_string(stage.index) + ": the CSV puts it on rank " +
                             std::to_string(rank) + " (" + lineOf(rank) + "), " + skeletonName + " on device " +
                             std::to_string(stage.device));
    }
    // PyTorch refuses such a pair too (_validate_schedule: "Got 8 F microbatches ..., expected 16").
    int microbatches = 0;
    for (const auto& rank : csv.computeOrder())
        for (const Instruction& instruction : rank) microbatches = std::max(microbatches, instruction.microbatch + 1);
    if (const int expected = skeleton.microbatchCount(); microbatches != expected)
        return makeError("the CSV runs " + std::to_string(microbatches) + " micro-batches, " + skeletonName + " " +
                         std::to_string(expected) + " (PyTorch refuses the pair too)");
    return build(csv, *stageRank, std::move(skeleton), {});
}

}  // namespace mario
