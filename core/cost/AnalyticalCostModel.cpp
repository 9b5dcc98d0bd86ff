#include "core/cost/AnalyticalCostModel.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/cost/CostModel.h"
#include "core/model/RankLayout.h"

namespace mario {

namespace {

// Adam in mixed precision (Megatron-LM's DistributedDataParallel and optimizer): the bf16
// weight (2), the gradient buffer the backward accumulates into and the reduction reads, in its
// dtype (fp32, 4, by default; bf16, 2, with --grad-reduce-in-bf16: Megatron-Core allocates its
// grad buffer in the reduce dtype), and the fp32 master weight, momentum and variance (12),
// which a distributed optimizer shards over dp (the buffers stay whole: the reduce-scatter runs
// in place). Without a reduce dtype: 2 + 4 + 12 = 18 bytes.
constexpr double kWeightBytesPerParam = 2;
constexpr double kShardedBytesPerParam = 12;
// One Adam step per parameter reads the fp32 gradient, master weight and two moments (16) and
// writes the last three and the bf16 weight (14).
constexpr double kOptimizerBytesPerParam = 30;
// Megatron-Core's gradient buckets with the overlap: max(40M, 1M · dp) parameters each
// (DistributedDataParallelConfig.bucket_size's default, larger with dp so that collectives stay
// bandwidth-bound); the bucket finished last is reduced after the backward.
constexpr double kGradientBucketParams = 40e6;
constexpr double kBucketParamsPerReplica = 1e6;
// Transformer Engine's userbuffer overlap of tensor-parallel communication (initialize_ub's
// defaults, transformer_engine/pytorch/module/base.py, TE 1.x as Megatron-Core r0.8 runs it):
// "pipeline" pairs (a GEMM into a reduce-scatter) cut the GEMM into 4 splits and run the
// communication kernels on 16 SMs beside it; "bulk" pairs run a whole collective on 16 SMs beside
// a whole GEMM; "ring_exchange" pairs (an all-gather into a GEMM) run tp steps, each a GEMM on
// 1/tp of the rows while the copy engines send the next chunk (no SMs taken).
constexpr double kOverlapSplits = 4;
constexpr double kCommSms = 16;

int replicasOf(const ParallelConfig& p) {
    const bool twoCopies = p.scheme == Scheme::Chimera || p.scheme == Scheme::DualPipe;
    return p.dp * (twoCopies ? 2 : 1);
}

// The data-parallel group: its members sit tp ranks apart (RankLayout.h), so a node holds
// gpus_per_node / tp of them; NCCL prices a hop inside a node and one across nodes apart, and
// a tree's depth grows with the nodes the group spans.
CollectiveGroup dataParallelGroup(const Config& config, const Collectives& collectives) {
    const HardwareConfig& hw = config.hardware;
    const ParallelConfig& p = config.parallel;
    const NodeLocality where = nodeLocality(p.pp, p.dp, p.tp, hw.gpus_per_node);
    const int perNode = std::clamp(hw.gpus_per_node / std::max(1, p.tp), 1, std::max(1, p.dp));
    CollectiveGroup group{replicasOf(p), 1, collectives.busBytesPerMs(where.data_parallel_in_node, perNode)};
    if (!where.data_parallel_in_node && hw.gpus_per_node > 0) {
        // The most nodes one device's replicas touch (a group that straddles a boundary counts both).
        for (int d = 0; d < p.pp; ++d) {
            int nodes = 1;
            for (int r = 1; r < p.dp; ++r)
                nodes += rankOf({d, r, 0}, p.tp, p.dp) / hw.gpus_per_node !=
                         rankOf({d, r - 1, 0}, p.tp, p.dp) / hw.gpus_per_node;
            group.nodes = std::max(group.nodes, nodes);
        }
    }
    // The second copy of a stage in Chimera and DualPipe lives on another pipeline device.
    if (group.ranks > p.dp) {
        group.bus_bytes_per_ms =
            std::min(group.bus_bytes_per_ms, collectives.busBytesPerMs(where.pipeline_in_node, 1));
        if (!where.pipeline_in_node) group.nodes *= 2;
    }
    return group;
}

}  // namespace

AnalyticalCostModel::AnalyticalCostModel(const Config& config)
    : model_(config.model), hardware_(config.hardware), parallel_(config.parallel), training_(config.training),
      collectives_(config.hardware), kernels_(config.model, config.training, KernelRoofline(config.hardware),
                                              config.parallel.tp, config.parallel.micro_batch_size),
      activations_(config.model, config.training, config.parallel.tp, config.parallel.micro_batch_size),
      b_(config.parallel.micro_batch_size), s_(config.model.sequence_length), h_(config.model.hidden),
      replicas_(replicasOf(config.parallel)), data_parallel_(dataParallelGroup(config, collectives_)),
      overhead_ms_(config.hardware.kernel_overhead_us * 1e-3), host_(config), link_(pipelineLink(config)) {}

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
          need(hw.peak_tflops > 0, "hardware.peak_tflops"), need(hw.hbm_gb_per_s > 0, "hardware.hbm_gb_per_s"),
          need(hw.gemm_efficiency > 0, "hardware.gemm_efficiency"),
          need(hw.hbm_efficiency > 0, "hardware.hbm_efficiency"),
          need(hw.flash_forward_efficiency > 0, "hardware.flash_forward_efficiency"),
          need(hw.flash_backward_efficiency > 0, "hardware.flash_backward_efficiency"), need(p.dp > 0, "parallel.dp"),
          need(p.tp > 0, "parallel.tp"), need(p.micro_batch_size > 0, "parallel.micro_batch_size")})
        if (check) return *check;
    const bool communicates = p.dp > 1 || p.tp > 1 || replicasOf(p) > 1;
    if (communicates && (hw.inter_node_gb_per_s <= 0 || hw.intra_node_gb_per_s <= 0 || hw.nvlink_efficiency <= 0 ||
                         hw.network_efficiency <= 0))
        return makeError("hardware.inter_node_gb_per_s: link bandwidths must be positive when devices communicate");
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

double AnalyticalCostModel::gradientBytesPerParameter() const { return training_.grad_reduce_in_bf16 ? 2 : 4; }

double AnalyticalCostModel::staticBytesPerParameter() const {
    const double replicated = kWeightBytesPerParam + gradientBytesPerParameter();
    return replicated + kShardedBytesPerParam / (parallel_.distributed_optimizer ? parallel_.dp : 1);
}

double AnalyticalCostModel::tensorParallelCommMs() const {
    if (parallel_.tp <= 1) return 0;
    // Two all-reduces of the block's bf16 activations per direction (after attention and
    // after the MLP); with sequence parallelism an all-gather before and a reduce-scatter after
    // each, which move the same bytes.
    return 2 * collectives_.allReduceMs(2.0 * s_ * b_ * h_, tensorParallelGroup());
}

CollectiveGroup AnalyticalCostModel::tensorParallelGroup() const {
    // Tensor-parallel groups are consecutive ranks: one node unless tp exceeds it.
    const int t = parallel_.tp, perNode = std::max(1, hardware_.gpus_per_node);
    return {t, (t + perNode - 1) / perNode, collectives_.busBytesPerMs(t <= perNode, 1)};
}

double AnalyticalCostModel::ringExchangeMs(const GemmShape& g, double commMs, GemmRole role) const {
    // tp steps: the local chunk's GEMM first, then each of the other tp − 1 chunks arrives over
    // the copy engines while earlier ones are multiplied. The chunk GEMMs run on up to three
    // streams at once, so together they fill the SMs as the whole GEMM would; the last chunk
    // can start only when the whole gather has arrived. Each chunk is a launch of its own.
    const double t = parallel_.tp;
    const double gemm = kernels_.roofline().gemmMs(g.m, g.n, g.k, 1, 2, role);
    const double whole = std::max(gemm, commMs + gemm / t) + (t - 1) * overhead_ms_;
    return whole - gemm;
}

double AnalyticalCostModel::pipelinedMs(const GemmShape& g, double commMs) const {
    // The GEMM in kOverlapSplits chunks: the first alone, each next one beside the previous
    // chunk's reduce-scatter on kCommSms SMs it cannot use, and the last reduce-scatter alone.
    const double gemm = kernels_.roofline().gemmMs(g.m, g.n, g.k);
    const double chunk = gemm / kOverlapSplits, step = commMs / kOverlapSplits;
    const double whole = chunk + (kOverlapSplits - 1) * (std::max(besideCommunication(chunk), step) + overhead_ms_) + step;
    return whole - gemm;
}

double AnalyticalCostModel::bulkMs(double gemmMs, double commMs) const {
    return std::max(besideCommunication(gemmMs), commMs) - gemmMs;
}

double AnalyticalCostModel::besideCommunication(double gemmMs) const {
    // The GEMM's tiles run on the SMs the communication kernels leave (none taken without sm_count).
    const double sms = hardware_.sm_count;
    return sms > kCommSms ? gemmMs * sms / (sms - kCommSms) : gemmMs;
}

double AnalyticalCostModel::exposedTensorParallelMs(bool backward) const {
    const double comm = tensorParallelCommMs();
    if (!training_.overlap_tp_comm || comm <= 0) return comm;
    // Four collectives of the block's activations per direction, each a quarter of `comm` (an
    // all-gather or reduce-scatter; two of them make an all-reduce).
    const double one = comm / 4;
    const auto [qkv, projection, up, down] = kernels_.weightGemms();
    if (!backward)  // all-gather → QKV and MLP up; projection and MLP down → reduce-scatter
        return ringExchangeMs(qkv, one) + pipelinedMs(projection, one) + ringExchangeMs(up, one) +
               pipelinedMs(down, one);
    // Backward: the gradients of the reduce-scatters are all-gathers into the data gradients of
    // the projection and MLP down; the column-parallel QKV and MLP up gather their input again
    // for the weight gradient beside their data-gradient GEMM, and reduce-scatter that data
    // gradient beside their weight-gradient GEMM: six collectives.
    const KernelRoofline& r = kernels_.roofline();
    auto dgrad = [](const GemmShape& g) { return GemmShape{g.m, g.k, g.n}; };
    // Each GEMM at its role's rate, as TransformerKernels prices it (per-role rates of a calibrated
    // preset; one rate for every role otherwise).
    double ms = ringExchangeMs(dgrad(projection), one, GemmRole::InputGradient) +
                ringExchangeMs(dgrad(down), one, GemmRole::InputGradient);
    for (const GemmShape& g : {qkv, up})
        ms += bulkMs(r.gemmMs(g.m, g.k, g.n, 1, 2, GemmRole::InputGradient), one) +
              bulkMs(r.gemmMs(g.k, g.n, g.m, 1, 2 * kernels_.gradientBytes(), GemmRole::WeightGradient), one);
    return ms;
}

double AnalyticalCostModel::gradientReductionMs(double params, double backwardMs, double forwardWindowMs,
                                                 bool opensTheStep) const {
    if (replicas_ <= 1 || params <= 0) return 0;
    // With the overlap each bucket is a collective of its own and pays its own latency (NCCL's
    // ring or tree, whichever its model says is faster for the bucket), so the cost grows with dp
    // per bucket, not once per stage; without it, one collective over the whole buffer
    // (Megatron-Core makes no buckets then).
    const double buckets =
        training_.overlap_grad_reduce
            ? std::ceil(params / std::max(kGradientBucketParams, kBucketParamsPerReplica * replicas_))
            : 1;
    const double bucketParams = params / buckets;
    const double bucketBytes = bucketParams * gradientBytesPerParameter();
    double bucketMs = 0, gather = 0;
    if (parallel_.distributed_optimizer) {  // reduce-scatter the gradients, all-gather the bf16 weights
        bucketMs = collectives_.reduceScatterMs(bucketBytes, data_parallel_);
        const double bucketGather = collectives_.allGatherMs(2 * bucketParams, data_parallel_);
        gather = buckets * bucketGather;
        // Megatron-Core gathers bucket after bucket in the forward pre-hooks of the next step's
        // first micro-batch: what that forward (the window) cannot cover stays, and the step's
        // very first bucket always does (nothing runs before it).
        if (training_.overlap_param_gather)
            gather = std::max(gather - forwardWindowMs, opensTheStep ? bucketGather : 0.0);
    } else {
        bucketMs = collectives_.allReduceMs(bucketBytes, data_parallel_);
    }
    double ms = buckets * bucketMs;
    if (training_.overlap_grad_reduce) ms = std::max(ms - backwardMs, bucketMs);
    return ms + gather;
}

StageCost AnalyticalCostModel::stageCost(const StageLayout& layout) const {
    StageCost cost;
    const double layers = layout.layerCount();
    KernelTimes time;
    const KernelTimes block = kernels_.block();
    time.forward_ms = layers * block.forward_ms;
    time.input_grad_ms = layers * block.input_grad_ms;
    time.weight_grad_ms = layers * block.weight_grad_ms;
    if (layout.has_embedding) time += kernels_.embedding();
    if (layout.has_head) time += kernels_.head();
    // Tensor parallelism: the block's collectives, and the head's gather of the final hidden
    // states (a reduce-scatter of their gradient on the way back).
    const double headComm = layout.has_head ? 0.5 * tensorParallelCommMs() : 0;
    const double forwardGpu = time.forward_ms + layers * exposedTensorParallelMs(false) + headComm;
    const double inputGradGpu = time.input_grad_ms + layers * exposedTensorParallelMs(true) + headComm;
    // Host time: each instruction lasts the longer of its GPU time and the host's issue time of
    // its operators (docs/cost-model.md#host-time); a fused B issues both halves' operators.
    const KernelTimes ops = host_.launches(layout);
    cost.forward_ms = host_.boundMs(forwardGpu, ops.forward_ms);
    cost.backward_input_ms = host_.boundMs(inputGradGpu, ops.input_grad_ms);
    cost.backward_weight_ms = host_.boundMs(time.weight_grad_ms, ops.weight_grad_ms);
    cost.backward_ms = host_.boundMs(inputGradGpu + time.weight_grad_ms, ops.input_grad_ms + ops.weight_grad_ms);
    // A checkpointed F keeps only the stage input (docs/execution-model.md), so R must rebuild every
    // activation B needs, the logits included: it repeats the whole stage forward, and sends nothing.
    cost.recompute_ms = cost.forward_ms;
    // Sends waited for before the next instruction (blockingSendMs): a stage that sends forward
    // (not the last) or backward (not the first) holds its compute stream for the transfer.
    const double blocked = blockingSendMs();
    // Megatron's scatter-gather: the receiving ranks all-gather the boundary over their
    // tensor-parallel group before they use it, on the compute stream.
    const double gather = boundaryGatherMs();
    if (!layout.has_head) cost.forward_ms += blocked;
    if (!layout.has_embedding) {
        cost.forward_ms += gather;
        *cost.backward_input_ms += blocked;
        cost.backward_ms += blocked;
    }
    if (!layout.has_head) {
        *cost.backward_input_ms += gather;
        cost.backward_ms += gather;
    }
    cost.forward_flops = (layers * layerForwardFlops() + (layout.has_head ? headForwardFlops() : 0)) / parallel_.tp;

    cost.activation_bytes = activations_.stage(layout.layerCount()) + (layout.has_head ? activations_.head() : 0);
    cost.checkpoint_bytes = activations_.stageInput();
    if (layout.has_head) cost.working_bytes = activations_.headTransient();

    const double params = stageParameters(layout) / parallel_.tp;
    // The block a full-recompute backward rebuilds is live once per stage, not per micro-batch in
    // flight: it is held with the stage's static memory (once per stage of a device, so a device
    // with several stages counts it more than once, an overestimate of at most one block each).
    cost.static_bytes = params * staticBytesPerParameter() + activations_.backwardWorkspace();
    cost.send_bytes = sendBytes(layout);
    // The weight gather's window: the stage's first forward, or with interleaving the pp forwards
    // the device runs of its previous chunk before this chunk's first (Megatron's warm-up order).
    const double gatherWindow = cost.forward_ms * (parallel_.chunks > 1 ? parallel_.pp : 1);
    cost.reduce_grad_ms = gradientReductionMs(params, cost.backward_ms, gatherWindow, layout.has_embedding);
    const double updated = parallel_.distributed_optimizer ? params / parallel_.dp : params;
    cost.optimizer_ms = kernels_.roofline().memoryMs(kOptimizerBytesPerParam * updated);
    return cost;
}

double AnalyticalCostModel::sendBytes(const StageLayout& layout) const {
    // The last stage of a chain sends nothing onward (the plan format's convention).
    return layout.has_head ? 0 : boundaryBytesPerRank();
}

double AnalyticalCostModel::boundaryBytesPerRank() const {
    // Each tensor-parallel rank sends its own 1/tp of the bf16 boundary (Megatron's
    // scatter-gather); DeepSpeed's pipeline engine sends the whole of it from every rank.
    const double whole = 2 * s_ * b_ * h_;
    return training_.framework == TrainingConfig::Framework::DeepSpeed ? whole : whole / parallel_.tp;
}

bool AnalyticalCostModel::sendsBlock() const {
    if (training_.framework == TrainingConfig::Framework::DeepSpeed) return true;  // blocking dist.send
    if (training_.overlap_p2p_comm) return !*training_.overlap_p2p_comm;
    // Megatron's 1F1B waits on the sends it posts before the next instruction (req.wait() in
    // _communicate), as PyTorch's Schedule1F1B (torchtitan's "1F1B") waits on each fused send and
    // receive. Megatron's interleaved schedule waits only when a buffer is next used
    // (--overlap-p2p-communication), PyTorch's multi-stage schedules at the step's end, and the
    // other schemes run as the execution model and mario-executor run them: sends beside compute.
    return parallel_.scheme == Scheme::OneFOneB;
}

double AnalyticalCostModel::boundaryGatherMs() const {
    // Only where a rank sends 1/tp of a boundary every rank holds whole (sendBytes): with
    // sequence parallelism each rank holds, sends and keeps its own slice.
    if (parallel_.tp <= 1 || training_.sequence_parallel || training_.framework == TrainingConfig::Framework::DeepSpeed)
        return 0;
    return collectives_.allGatherMs(2 * s_ * b_ * h_, tensorParallelGroup());
}

double AnalyticalCostModel::blockingSendMs() const {
    if (!sendsBlock()) return 0;
    // A backward send carries the same bytes as the forward one (the boundary's gradient); the
    // last stage sends none forward but one backward, so price the sent boundary either way.
    return link_.transferMs(boundaryBytesPerRank());
}

}  // namespace mario
