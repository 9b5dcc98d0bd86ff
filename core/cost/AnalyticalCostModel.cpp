#include "core/cost/AnalyticalCostModel.h"

#include <optional>
#include <string>

#include "core/model/RankLayout.h"

namespace mario {

namespace {

// Adam in mixed precision: bf16 weight (2) + fp32 gradient accumulator (4) + fp32 master
// weight, momentum and variance (12). A distributed optimizer shards the 12 over dp.
constexpr double kAdamBytesPerParam = 18;
constexpr double kReplicatedBytesPerParam = 6;
constexpr double kShardedBytesPerParam = 12;
// The optimizer step reads and writes the state: about three passes over the static bytes.
constexpr double kOptimizerPasses = 3;

}  // namespace

AnalyticalCostModel::AnalyticalCostModel(const Config& config)
    : model_(config.model), hardware_(config.hardware), parallel_(config.parallel),
      b_(config.parallel.micro_batch_size), s_(config.model.sequence_length), h_(config.model.hidden),
      data_parallel_in_node_(
          nodeLocality(parallel_.pp, parallel_.dp, parallel_.tp, hardware_.gpus_per_node).data_parallel_in_node) {}

Result<AnalyticalCostModel> AnalyticalCostModel::create(const Config& config) {
    const ModelConfig& m = config.model;
    const HardwareConfig& hw = config.hardware;
    const ParallelConfig& p = config.parallel;
    auto need = [](bool good, const char* path) -> std::optional<Error> {
        if (good) return std::nullopt;
        return makeError(std::string(path) + ": must be positive for the analytical cost model");
    };
    for (auto check :
         {need(m.layers > 0, "model.layers"), need(m.hidden > 0, "model.hidden"), need(m.heads > 0, "model.heads"),
          need(m.vocab > 0, "model.vocab"), need(m.sequence_length > 0, "model.sequence_length"),
          need(hw.peak_tflops > 0, "hardware.peak_tflops"), need(hw.achievable_mfu > 0, "hardware.achievable_mfu"),
          need(hw.hbm_gb_per_s > 0, "hardware.hbm_gb_per_s"), need(p.dp > 0, "parallel.dp"),
          need(p.tp > 0, "parallel.tp"), need(p.micro_batch_size > 0, "parallel.micro_batch_size")})
        if (check) return *check;
    if (p.dp > 1 && (hw.inter_node_gb_per_s <= 0 || hw.intra_node_gb_per_s <= 0))
        return makeError("hardware.inter_node_gb_per_s: link bandwidths must be positive when dp > 1");
    if (m.heads % m.kvHeads() != 0)
        return makeError("model.kv_heads: " + std::to_string(m.kvHeads()) + " KV heads do not divide " +
                         std::to_string(m.heads) + " heads");
    return AnalyticalCostModel(config);
}

double AnalyticalCostModel::layerForwardFlops() const {
    double kvDim = h_ * model_.kvHeads() / model_.heads;  // grouped-query attention shrinks K and V
    double ffnMatrices = model_.gated_mlp ? 3 : 2;
    double projections = 2 * b_ * s_ * (2 * h_ * h_ + 2 * h_ * kvDim);  // Q and O, K and V
    double attention = 4 * b_ * s_ * s_ * h_;                           // Q·Kᵀ and scores·V
    double mlp = 2 * b_ * s_ * h_ * model_.ffnHidden() * ffnMatrices;
    return projections + attention + mlp;
}

double AnalyticalCostModel::headForwardFlops() const { return 2 * b_ * s_ * h_ * model_.vocab; }

double AnalyticalCostModel::layerParameters() const {
    double kvDim = h_ * model_.kvHeads() / model_.heads;
    double ffnMatrices = model_.gated_mlp ? 3 : 2;
    double norms = model_.gated_mlp ? 2 * h_ : 4 * h_;  // two RMSNorm weights, or two LayerNorms w+b
    return 2 * h_ * h_ + 2 * h_ * kvDim + h_ * model_.ffnHidden() * ffnMatrices + norms;
}

double AnalyticalCostModel::embeddingParameters() const {
    double positions = model_.gated_mlp ? 0 : s_ * h_;  // learned positions (GPT); LLaMA uses RoPE
    return double(model_.vocab) * h_ + positions;
}

double AnalyticalCostModel::headParameters() const {
    double finalNorm = model_.gated_mlp ? h_ : 2 * h_;
    return double(model_.vocab) * h_ + finalNorm;
}

double AnalyticalCostModel::modelParameters() const {
    double head = headParameters() - (model_.tied_embeddings ? double(model_.vocab) * h_ : 0);
    return model_.layers * layerParameters() + embeddingParameters() + head;
}

double AnalyticalCostModel::stageParameters(const StageLayout& layout) const {
    return layout.layerCount() * layerParameters() + (layout.has_embedding ? embeddingParameters() : 0) +
           (layout.has_head ? headParameters() : 0);
}

double AnalyticalCostModel::layerActivationBytes() const {
    // Korthikanti et al. eq. 2 with sequence parallelism: every term is sharded by tp.
    double a = model_.heads;
    return s_ * b_ * h_ * (34 + 5 * a * s_ / h_) / parallel_.tp;
}

double AnalyticalCostModel::headActivationBytes() const {
    return 4 * s_ * b_ * model_.vocab / parallel_.tp;  // fp32 logits, vocab-parallel
}

double AnalyticalCostModel::checkpointBytes() const {
    // bf16 stage input; with sequence parallelism each tp rank holds its slice of the sequence.
    return 2 * s_ * b_ * h_ / parallel_.tp;
}

double AnalyticalCostModel::staticBytesPerParameter() const {
    if (parallel_.distributed_optimizer) return kReplicatedBytesPerParam + kShardedBytesPerParam / parallel_.dp;
    return kAdamBytesPerParam;
}

double AnalyticalCostModel::flopsToMs(double flops) const {
    double mfu = hardware_.achievable_mfu;
    if (hardware_.mfu_half_tokens > 0) {
        const double tokens = b_ * s_;
        mfu *= tokens / (tokens + hardware_.mfu_half_tokens);
    }
    return flops / parallel_.tp / (hardware_.peak_tflops * 1e12 * mfu) * 1e3;
}

double AnalyticalCostModel::tensorParallelCommMs() const {
    const int t = parallel_.tp;
    if (t <= 1) return 0;
    const double bytes = 2.0 * s_ * b_ * h_;  // bf16 activations of one layer
    const double ring = 2.0 * (t - 1) / t * bytes / (hardware_.intra_node_gb_per_s * 1e9) * 1e3;
    return 2 * (ring + 2.0 * (t - 1) * hardware_.link_latency_ms);
}

StageCost AnalyticalCostModel::stageCost(const StageLayout& layout) const {
    StageCost cost;
    double layers = layout.layerCount();
    // The embedding is a table lookup: no FLOPs worth counting, only parameters.
    double forwardFlops = layers * layerForwardFlops() + (layout.has_head ? headForwardFlops() : 0);
    // Tensor parallelism splits the FLOPs but adds, per layer and direction, two collectives
    // of the layer's activations inside the node (Megatron: after attention and after the
    // MLP; all-gather + reduce-scatter with sequence parallelism move the same bytes).
    const double tpComm = layers * tensorParallelCommMs();
    cost.forward_ms = flopsToMs(forwardFlops) + tpComm;
    cost.backward_ms = 2 * flopsToMs(forwardFlops) + tpComm;  // two products per forward one
    // A checkpointed F keeps only the stage input (docs/execution-model.md), so R must rebuild every
    // activation B needs, the logits included: it repeats the whole stage forward.
    cost.recompute_ms = cost.forward_ms;

    cost.activation_bytes = layers * layerActivationBytes() + (layout.has_head ? headActivationBytes() : 0);
    cost.checkpoint_bytes = checkpointBytes();

    double params = stageParameters(layout) / parallel_.tp;
    cost.static_bytes = params * staticBytesPerParameter();
    // The last stage of a chain sends nothing onward (the plan format's convention).
    cost.send_bytes = layout.has_head ? 0 : 2 * s_ * b_ * h_ / parallel_.tp;

    int dp = parallel_.dp;
    if (dp > 1) {
        // Ring all-reduce of bf16 gradients among the replicas of one device. In Megatron-LM's
        // rank order (RankLayout.h) they sit tp apart, so they share a node whenever tp · dp
        // GPUs fit in one; a ring with one hop across nodes runs at InfiniBand's pace.
        double bandwidth = data_parallel_in_node_ ? hardware_.intra_node_gb_per_s : hardware_.inter_node_gb_per_s;
        double bytes = 2.0 * (dp - 1) / dp * params * 2;
        cost.reduce_grad_ms = bytes / (bandwidth * 1e9) * 1e3 + 2.0 * (dp - 1) * hardware_.link_latency_ms;
    }
    cost.optimizer_ms = kOptimizerPasses * cost.static_bytes / (hardware_.hbm_gb_per_s * 1e9) * 1e3;
    return cost;
}

}  // namespace mario
