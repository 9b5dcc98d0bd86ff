#pragma once
// Costs fitted to measurements, as the Mario paper's simulator does (§5.2): every quantity is
// y = a·x + b in the number x of transformer blocks a stage holds, b being the framework's
// fixed overhead. The fits come from a profile file (*.profile.json), whose one reader and
// writer is core/io/ProfileJson.h.
#include <optional>
#include <vector>

#include "core/cost/StageLayout.h"
#include "core/model/Config.h"
#include "core/schedule/StageCost.h"
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
    double optimizer_ms = 0;   // its weights' optimizer step
    double working_bytes = 0;  // transient bytes above what it keeps (StageCost::working_bytes)
};

// Everything a profile holds, as plain numbers: what a profiler fills in.
struct ProfileFits {
    int micro_batch_size = 1;
    int sequence_length = 0;  // 0: not recorded, not checked
    int tp = 0;               // 0: not recorded, not checked
    LinearFit forward_ms, backward_ms, recompute_ms, activation_bytes, static_bytes, reduce_grad_ms, optimizer_ms;
    std::optional<LinearFit> backward_input_ms, backward_weight_ms;  // measured I and W, when split
    std::optional<LinearFit> weight_grad_bytes;                      // measured bytes I keeps until W
    double working_bytes = 0;  // the largest transient of a block slice (not a fit)
    // Slowdown per other device computing at once, the times above being alone (measured with
    // neighbours busy: StageCost::contention); 0 when measured without neighbours.
    double contention = 0;
    // The same for the optimizer step beside neighbours running theirs (StageCost::
    // optimizer_contention); unset when not measured.
    std::optional<double> optimizer_contention;
    double checkpoint_bytes = 0;
    double send_bytes = 0;
    ProfileExtra embedding, head;
};

class ProfileCostModel {
public:
    ProfileCostModel() = default;
    // From measured numbers: a profile file's (core/io/ProfileJson.h reads them) or a profiler's.
    explicit ProfileCostModel(const ProfileFits& fits);

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
    std::optional<LinearFit> weight_grad_bytes_;
    double working_bytes_ = 0;
    double contention_ = 0;
    std::optional<double> optimizer_contention_;
    double checkpoint_bytes_ = 0;
    double send_bytes_ = 0;
    ProfileExtra embedding_;
    ProfileExtra head_;
};

}  // namespace mario
