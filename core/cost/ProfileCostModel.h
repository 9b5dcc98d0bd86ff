#pragma once
// Costs fitted to measurements, as the Mario paper's simulator does (§5.2): every quantity is
// y = a·x + b in the number x of transformer blocks a stage holds, b being the framework's
// fixed overhead. File format (*.profile.json):
//   {"format": "mario-profile", "version": 1, "micro_batch_size": 1, "sequence_length": 2048,
//    "forward_ms": {"a": .., "b": ..}, "backward_ms": {..}, "recompute_ms": {..},
//    "activation_bytes": {..}, "static_bytes": {..},
//    "checkpoint_bytes": .., "send_bytes": ..,
//    optional: "tp", "reduce_grad_ms": {..}, "optimizer_ms": {..},
//              "backward_input_ms": {..}, "backward_weight_ms": {..}  (a split backward's I and W;
//                 without them each is half the backward),
//              "embedding": {..}, "head": {..}  (extras added to the first / last stage)}
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/cost/StageCost.h"
#include "core/cost/StageLayout.h"
#include "core/model/Config.h"
#include "core/util/Result.h"

namespace mario {

struct LinearFit {
    double a = 0;  // per transformer block
    double b = 0;  // per stage, whatever its size

    double at(double blocks) const { return a * blocks + b; }
};

// What the stage holding the embedding or the LM head costs on top of its blocks' fit.
struct ProfileExtra {
    double forward_ms = 0;
    double backward_ms = 0;
    double recompute_ms = 0;
    double activation_bytes = 0;
    double static_bytes = 0;
    double optimizer_ms = 0;  // its weights' optimizer step
};

// Everything a profile holds, as plain numbers: what a profiler fills in.
struct ProfileFits {
    int micro_batch_size = 1;
    int sequence_length = 0;  // 0: not recorded, not checked
    int tp = 0;               // 0: not recorded, not checked
    LinearFit forward_ms, backward_ms, recompute_ms, activation_bytes, static_bytes, reduce_grad_ms, optimizer_ms;
    std::optional<LinearFit> backward_input_ms, backward_weight_ms;  // measured I and W, when split
    double checkpoint_bytes = 0;
    double send_bytes = 0;
    ProfileExtra embedding, head;
};

// What a profile was measured on, as its file says: shown beside a profile in the window and
// naming the model a live run executes. Empty names and 0 when the file does not record them.
struct ProfileProvenance {
    std::string model;
    std::string hardware;
    int sequence_length = 0;
};

class ProfileCostModel {
public:
    // Reads only the provenance fields, so a profile of a newer format still says what it is.
    static Result<ProfileProvenance> provenance(const std::string& path);
    ProfileCostModel() = default;
    // From measured numbers; toJson() then writes them in the one profile format.
    explicit ProfileCostModel(const ProfileFits& fits);
    static Result<ProfileCostModel> load(const std::string& path);
    // path is the JSON path of the object, for errors (empty for a file's root).
    static Result<ProfileCostModel> fromJson(const nlohmann::json& object, const std::string& path);
    nlohmann::json toJson() const;

    // Per-stage costs for a config. The profile was measured at one micro-batch size; other
    // sizes scale the per-block slopes (work and activations grow with the batch) but not the
    // intercepts (framework overhead). A different sequence length or tp is an error: attention
    // is not linear in the sequence, and tp changes what each device computes.
    Result<std::vector<StageCost>> stageCosts(const Config& config, const std::vector<StageLayout>& layouts) const;

    int microBatchSize() const { return micro_batch_size_; }
    int sequenceLength() const { return sequence_length_; }

private:
    int micro_batch_size_ = 1;
    int sequence_length_ = 0;  // 0: not recorded, not checked
    int tp_ = 0;               // 0: not recorded, not checked
    LinearFit forward_ms_;
    LinearFit backward_ms_;
    LinearFit recompute_ms_;
    LinearFit activation_bytes_;
    LinearFit static_bytes_;
    LinearFit reduce_grad_ms_;
    LinearFit optimizer_ms_;
    std::optional<LinearFit> backward_input_ms_;
    std::optional<LinearFit> backward_weight_ms_;
    double checkpoint_bytes_ = 0;
    double send_bytes_ = 0;
    ProfileExtra embedding_;
    ProfileExtra head_;
};

}  // namespace mario
