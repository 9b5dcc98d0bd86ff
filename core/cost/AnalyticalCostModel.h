#pragma once
// Costs from first principles (docs/cost-model.md): FLOPs of the dense matrix products, time at a
// fraction of peak, activation memory after Korthikanti et al. ("Reducing Activation
// Recomputation in Large Transformer Models", 2022), mixed-precision Adam state.
// All figures are per device: tensor parallelism (with sequence parallelism) divides them.
#include <vector>

#include "core/cost/StageCost.h"
#include "core/cost/StageLayout.h"
#include "core/model/Config.h"
#include "core/util/Result.h"

namespace mario {

class AnalyticalCostModel {
public:
    // Checks that the model, hardware and parallel sizes the formulas divide by are positive.
    static Result<AnalyticalCostModel> create(const Config& config);

    // FLOPs of one micro-batch on the whole (unsplit) model piece; divide by tp per device.
    double layerForwardFlops() const;  // one transformer block
    double headForwardFlops() const;   // LM head projection to the vocabulary

    // Parameters (whole, before tp). GPT-style models (no gated MLP) carry LayerNorms with
    // biases and learned positions; LLaMA-style ones RMSNorm and rotary positions.
    double layerParameters() const;
    double embeddingParameters() const;  // on the first stage of a chain
    double headParameters() const;       // on the last stage, plus the final norm
    // Distinct parameters of the model: a tied head is counted once here, although under
    // pipeline parallelism the last stage keeps its own copy (stageParameters counts it).
    double modelParameters() const;
    double stageParameters(const StageLayout& layout) const;

    // Bytes kept from F to B for one block and one micro-batch, per device.
    double layerActivationBytes() const;
    // Extra activations of the last stage: the fp32 logits, per device.
    double headActivationBytes() const;
    // The stage input a checkpointed F keeps (bf16 hidden states), per device.
    double checkpointBytes() const;
    // Weights + gradients + optimizer state per parameter.
    double staticBytesPerParameter() const;

    double flopsToMs(double flops) const;  // per device, at peak * achievable MFU

    // Per layer and direction: the two tensor-parallel collectives over the node's links (0 at tp 1).
    double tensorParallelCommMs() const;
    StageCost stageCost(const StageLayout& layout) const;

private:
    explicit AnalyticalCostModel(const Config& config);

    ModelConfig model_;
    HardwareConfig hardware_;
    ParallelConfig parallel_;
    double b_;  // micro-batch size
    double s_;  // sequence length
    double h_;  // hidden size
    // The replicas of one device share a node (RankLayout.h): the all-reduce runs over NVLink.
    bool data_parallel_in_node_;
};

}  // namespace mario
