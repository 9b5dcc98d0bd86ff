// The per-operator cost model against values worked by hand from published formulas: Megatron-LM's
// FLOP count, Korthikanti et al.'s activation bytes, the collectives' wiring, a GEMM roofline
// with tiles and waves, MFU as model FLOPs over step × GPUs × peak.
#include <gtest/gtest.h>

#include "core/cost/AnalyticalCostModel.h"
#include "core/cost/Collectives.h"
#include "core/cost/CostModel.h"
#include "core/cost/KernelRoofline.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/CostTestConfigs.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using testing::presetConfig;
using testing::tinyGpt;

AnalyticalCostModel analytical(const Config& c) {
    auto m = AnalyticalCostModel::create(c);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    return *m;
}

StageCost stageOf(const Config& c, StageLayout layout) {
    auto costs = computeStageCosts(c, {layout});
    EXPECT_TRUE(costs.ok()) << (costs.ok() ? "" : costs.error().message);
    return costs.ok() ? (*costs)[0] : StageCost{};
}

TEST(AnalyticalCost, LayerFlopsEqualMegatronForGpt) {
    // Megatron (Narayanan et al. 2021): a GPT layer's forward is 24·b·s·h² + 4·b·s²·h FLOPs.
    Config c = presetConfig("gpt3-13b", "a100-40g", 4);
    c.parallel.micro_batch_size = 2;
    const double b = 2, s = 2048, h = 5120, V = 51200;
    auto model = analytical(c);
    EXPECT_DOUBLE_EQ(model.layerForwardFlops(), 24 * b * s * h * h + 4 * b * s * s * h);
    EXPECT_DOUBLE_EQ(model.headForwardFlops(), 2 * b * s * h * V);
}

TEST(AnalyticalCost, StageFlopsAddUpToMegatronsStep) {
    // One step without recompute: 72·B·s·L·h²·(1 + s/6h + V/12Lh) FLOPs for B sequences, the
    // forward being a third of it; per GPU with tp = 2.
    Config c = presetConfig("gpt3-13b", "a100-40g", 4, 1, 2);
    auto costs = computeStageCosts(c, evenLayout(40, 4));
    ASSERT_TRUE(costs.ok()) << costs.error().message;
    double forward = 0;
    for (const auto& stage : *costs) forward += stage.forward_flops;
    const double B = 1, s = 2048, L = 40, h = 5120, V = 51200;
    const double step = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
    EXPECT_NEAR(3 * forward * 2 / step, 1.0, 1e-12);
}

TEST(AnalyticalCost, GroupedQueryAttentionAndKnownParameterCounts) {
    // LLaMA-3 8B layer: q,o 2·4096², k,v 2·4096·1024, SwiGLU 3·4096·14336, two RMSNorms.
    EXPECT_DOUBLE_EQ(analytical(presetConfig("llama3-8b", "h100", 8)).layerParameters(),
                     33554432.0 + 8388608.0 + 176160768.0 + 8192.0);
    EXPECT_NEAR(analytical(presetConfig("gpt3-13b", "a100-40g", 1)).modelParameters(), 12.9e9, 0.1e9);
    EXPECT_NEAR(analytical(presetConfig("llama2-7b", "a100-40g", 1)).modelParameters(), 6.74e9, 0.05e9);
    EXPECT_NEAR(analytical(presetConfig("llama2-13b", "a100-40g", 1)).modelParameters(), 13.0e9, 0.1e9);
    EXPECT_NEAR(analytical(presetConfig("llama3-8b", "h100", 1)).modelParameters(), 8.03e9, 0.05e9);
    EXPECT_NEAR(analytical(presetConfig("llama3-70b", "h100", 1)).modelParameters(), 70.6e9, 0.5e9);
    EXPECT_NEAR(analytical(presetConfig("gpt3-1.6b", "a100-40g", 1)).modelParameters(), 1.7e9, 0.1e9);
}

// An accelerator of 100 TFLOP/s on 4 SMs, GEMMs at half of peak, 1000 GB/s, 2 µs per kernel.
HardwareConfig rooflineHardware() {
    HardwareConfig hw = tinyGpt().hardware;
    hw.sm_count = 4;
    hw.gemm_efficiency = 0.5;
    hw.kernel_overhead_us = 2;
    return hw;
}

TEST(AnalyticalCost, GemmRooflineWorkedByHand) {
    KernelRoofline roofline(rooflineHardware());
    // 512×256×1024: eight 128×128 tiles in two full waves of the 4 SMs, at the full rate
    // whatever K (two tiles per SM hide each other's prologue and epilogue):
    // 2·512·256·1024 FLOPs at 100e9 FLOP/ms × 0.5; its 1,835,008 bytes would take 1.8 µs.
    EXPECT_NEAR(roofline.gemmMs(512, 256, 1024), 268435456.0 / (1e11 * 0.5) + 0.002, 1e-12);
    // 300×128: three 128×128 tiles in one wave of 4 SMs compute 4·128·128 outputs for 300·128
    // useful ones (0.5859375); 128×64 and 64×128 tiles (6 or 5 of them, two waves) keep the
    // same share busy at 2/3 of the rate, 64×64 (10, three waves: 0.78125) at half of it.
    EXPECT_DOUBLE_EQ(roofline.tileEfficiency(300, 128), 0.5859375);
    EXPECT_NEAR(roofline.gemmMs(300, 128, 128), 9830400.0 / (1e11 * 0.5 * 0.5859375) + 0.002, 1e-12);
    // 128×128×65536, one tile for 4 SMs: K split 4 ways fills them (2·128·128·65536 FLOPs at the
    // full rate), and a second kernel reads and sums the four fp32 partial products
    // (8·4·128·128 bytes) — a quarter of the unsplit time (0.172 ms) plus 2.5 µs.
    EXPECT_NEAR(roofline.gemmMs(128, 128, 65536), 2147483648.0 / (1e11 * 0.5) + 8 * 4 * 16384 / 1e9 + 2 * 0.002, 1e-12);
    // Eight 256×256×16 products at 100 GB/s: 2·(256·16 + 16·256 + 256·256)·8 = 1,179,648 bytes
    // take 0.0118 ms, 35 times the tensor-core time: memory bounds it. Accumulating into an
    // fp32 gradient reads and writes C: 8 bytes an element, (2·8192 + 8·65536)·8 bytes.
    HardwareConfig slow = rooflineHardware();
    slow.hbm_gb_per_s = 100;
    EXPECT_NEAR(KernelRoofline(slow).gemmMs(256, 256, 16, 8), 1179648.0 / 1e8 + 0.002, 1e-12);
    EXPECT_NEAR(KernelRoofline(slow).gemmMs(256, 256, 16, 8, 8), 4325376.0 / 1e8 + 0.002, 1e-12);
    EXPECT_NEAR(roofline.memoryMs(4e6), 4e6 / 1e9 + 0.002, 1e-12);
}

// A preset's rate per product role (HardwareConfig::gemm_input_grad_efficiency): the data and
// weight gradients at their own efficiencies, the forward at gemm_efficiency; without them every
// role is priced at gemm_efficiency. 512×256×1024 is two full waves of 128×128 tiles (above).
TEST(AnalyticalCost, GemmRatePerRoleWorkedByHand) {
    HardwareConfig hw = rooflineHardware();
    const double flops = 2.0 * 512 * 256 * 1024;
    for (GemmRole role : {GemmRole::Forward, GemmRole::InputGradient, GemmRole::WeightGradient})
        EXPECT_NEAR(KernelRoofline(hw).gemmMs(512, 256, 1024, 1, 2, role), flops / (1e11 * 0.5) + 0.002, 1e-12);
    hw.gemm_input_grad_efficiency = 0.4;
    hw.gemm_weight_grad_efficiency = 0.25;
    const KernelRoofline roofline(hw);
    EXPECT_NEAR(roofline.gemmMs(512, 256, 1024, 1, 2, GemmRole::Forward), flops / (1e11 * 0.5) + 0.002, 1e-12);
    EXPECT_NEAR(roofline.gemmMs(512, 256, 1024, 1, 2, GemmRole::InputGradient), flops / (1e11 * 0.4) + 0.002, 1e-12);
    EXPECT_NEAR(roofline.gemmMs(512, 256, 1024, 1, 2, GemmRole::WeightGradient), flops / (1e11 * 0.25) + 0.002,
                1e-12);
}

// Transformer Engine's overlap of tensor-parallel communication, worked by hand: tp 4 with
// sequence parallelism, T = 1024 tokens, h = 2048, every GEMM a full wave of 128×128 tiles on
// 32 SMs at 1e11 FLOP/ms, HBM too fast to matter, no launch cost. One all-gather or
// reduce-scatter of the 2·T·h bytes, C, is half an all-reduce of them over NVLink at 2e8
// bytes/ms as NCCL's model prices it (collectives_test checks that price).
TEST(AnalyticalCost, OverlappedTensorParallelismPaysSlowdownAndExposedChunks) {
    Config c = tinyGpt();
    c.model = {"wide", 2, 2048, 16, 0, 0, 1000, 1024, false, true};
    c.parallel.micro_batch_size = 1;
    c.parallel.tp = 4;
    c.hardware.sm_count = 32;
    c.hardware.hbm_gb_per_s = 1e12;
    c.hardware.intra_node_gb_per_s = 200;
    c.training.overlap_tp_comm = true;
    const double T = 1024, h = 2048, C = Collectives(c.hardware).allReduceMs(2 * T * h, {4, 1, 2e8}) / 2;
    auto gemm = [](double m, double n, double k) { return 2 * m * n * k / 1e11; };
    const double qkv = gemm(T, 3 * h / 4, h), proj = gemm(T, h, h / 4), mlp = gemm(T, h, h);  // up, down alike
    auto model = AnalyticalCostModel::create(c);
    ASSERT_TRUE(model.ok());
    EXPECT_NEAR(model->tensorParallelCommMs(), 4 * C, 1e-12);
    // Forward. The all-gathers into QKV and MLP up run in 4 ring steps beside the GEMM and end
    // before it: C + G/4 < G, nothing exposed. The projection and MLP down run in 4 splits into
    // their reduce-scatters: the first split alone, three beside the previous split's
    // reduce-scatter on 16 of the 32 SMs (twice as long), the last reduce-scatter alone:
    // G/4 + 3·2·G/4 + C/4, i.e. 0.75·G + C/4 beyond the GEMM. Perfect overlap said 0.
    EXPECT_LT(C + qkv / 4, qkv);
    EXPECT_NEAR(model->exposedTensorParallelMs(false), 0.75 * (proj + mlp) + 2 * C / 4, 1e-9);
    // Backward: the projection's data gradient (T × h/4 × h) is shorter than its gather: C − 3G/4
    // exposed; MLP down's is not. QKV and MLP up gather their input again beside their data
    // gradient and reduce-scatter it beside their weight gradient, each GEMM on half the SMs:
    // twice as long, so each pair exposes its GEMM again.
    const double projDgrad = gemm(T, h / 4, h);
    EXPECT_NEAR(model->exposedTensorParallelMs(true), (C - 0.75 * projDgrad) + 2 * qkv + 2 * mlp, 1e-6);
    // A calibrated preset's per-role rates, here data and weight gradients at half the forward's:
    // every backward GEMM beside a collective takes twice as long. The projection's data gradient
    // (2G) against its gather: max(0, C − 1.5G); each QKV and MLP-up pair exposes its doubled GEMM.
    Config roles = c;
    roles.hardware.gemm_input_grad_efficiency = c.hardware.gemm_efficiency / 2;
    roles.hardware.gemm_weight_grad_efficiency = c.hardware.gemm_efficiency / 2;
    auto byRole = AnalyticalCostModel::create(roles);
    ASSERT_TRUE(byRole.ok());
    EXPECT_NEAR(byRole->exposedTensorParallelMs(false), model->exposedTensorParallelMs(false), 1e-12);
    EXPECT_NEAR(byRole->exposedTensorParallelMs(true),
                std::max(0.0, C - 0.75 * 2 * projDgrad) + 4 * qkv + 4 * mlp, 1e-6);
    // Without the overlap every collective is on the critical path.
    c.training.overlap_tp_comm = false;
    EXPECT_NEAR(AnalyticalCostModel::create(c)->exposedTensorParallelMs(false), 4 * C, 1e-12);
}

TEST(AnalyticalCost, ActivationBytesFollowKorthikanti) {
    // s = 128, b = 2, h = 64, a = 4: sbh = 16384, 5as/h = 40.
    Config c = tinyGpt();
    c.training.attention = TrainingConfig::Attention::Materialized;
    const StageLayout middle{1, 3, false, false};
    EXPECT_DOUBLE_EQ(stageOf(c, middle).activation_bytes, 2 * 16384.0 * (34 + 40));
    // The last stage also keeps fp32 logits: 4·s·b·V = 4·128·2·1000.
    EXPECT_DOUBLE_EQ(stageOf(c, {2, 4, false, true}).activation_bytes, 2 * 16384.0 * 74 + 1024000.0);
    // While the head runs, its bf16 logits live beside the fp32 copy: 2·s·b·V, transient; no
    // other stage has a transient in the analytical model.
    EXPECT_DOUBLE_EQ(stageOf(c, {2, 4, false, true}).working_bytes, 512000.0);
    EXPECT_DOUBLE_EQ(stageOf(c, middle).working_bytes, 0);
    c.parallel.tp = 2;  // vocabulary-parallel: each rank its 1/t of the logits
    EXPECT_DOUBLE_EQ(stageOf(c, {2, 4, false, true}).working_bytes, 256000.0);
    // with sequence parallelism: sbh(34 + 5as/h) / t
    EXPECT_DOUBLE_EQ(stageOf(c, middle).activation_bytes, 2 * 16384.0 * 74 / 2);
    c.training.sequence_parallel = false;  // sbh(10 + 24/t + 5as/(ht))
    EXPECT_DOUBLE_EQ(stageOf(c, middle).activation_bytes, 2 * 16384.0 * (10 + 12 + 20));
    c.training.recompute = TrainingConfig::Recompute::Selective;  // sbh(10 + 24/t)
    EXPECT_DOUBLE_EQ(stageOf(c, middle).activation_bytes, 2 * 16384.0 * (10 + 12));
    c.training.sequence_parallel = true;  // 34·sbh/t
    EXPECT_DOUBLE_EQ(stageOf(c, middle).activation_bytes, 2 * 16384.0 * 34 / 2);
    // FlashAttention keeps 34·sbh and an fp32 log-sum-exp per row and head: 4·b·a·s.
    c = tinyGpt();
    EXPECT_DOUBLE_EQ(stageOf(c, middle).activation_bytes, 2 * (16384.0 * 34 + 4 * 2 * 4 * 128));
    // Full recomputation keeps each block's input, 2·sbh, and rebuilds one block at a time.
    c.training.attention = TrainingConfig::Attention::Materialized;
    c.training.recompute = TrainingConfig::Recompute::Full;
    const StageCost full = stageOf(c, middle);
    EXPECT_DOUBLE_EQ(full.activation_bytes, 2 * 2 * 16384.0);
    const StageCost none = stageOf(tinyGpt(), middle);
    EXPECT_DOUBLE_EQ(full.static_bytes - none.static_bytes, 16384.0 * 74 - 2 * 16384.0);
}

TEST(AnalyticalCost, CheckpointSendAndStaticBytes) {
    Config c = tinyGpt();
    auto costs = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(costs.ok());
    EXPECT_DOUBLE_EQ((*costs)[0].checkpoint_bytes, 2 * 128 * 2 * 64.0);
    EXPECT_DOUBLE_EQ((*costs)[0].send_bytes, 2 * 128 * 2 * 64.0);
    EXPECT_DOUBLE_EQ((*costs)[1].send_bytes, 0);  // nothing after the last stage
    // A layer: attention 4·64² = 16384, MLP 2·64·256 = 32768, two LayerNorms 4·64 = 256.
    const double layer = 16384 + 32768 + 256;
    const double embedding = 1000 * 64 + 128 * 64;  // tokens + learned positions
    const double head = 1000 * 64 + 2 * 64;         // PP's own copy of the tied head + final LN
    EXPECT_DOUBLE_EQ((*costs)[0].static_bytes, (2 * layer + embedding) * 18);
    EXPECT_DOUBLE_EQ((*costs)[1].static_bytes, (2 * layer + head) * 18);
    // A distributed optimizer over dp = 4 keeps 6 + 12/4 = 9 bytes a parameter.
    c.parallel.dp = 4;
    c.parallel.distributed_optimizer = true;
    auto sharded = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(sharded.ok());
    EXPECT_DOUBLE_EQ((*sharded)[0].static_bytes, (2 * layer + embedding) * 9);
    // Gradients reduced in bf16 live in a bf16 buffer (Megatron-Core's grad buffer takes the
    // reduce dtype): 2 bytes a parameter fewer, with or without the distributed optimizer.
    c.training.grad_reduce_in_bf16 = true;
    auto bf16 = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(bf16.ok());
    EXPECT_DOUBLE_EQ((*bf16)[0].static_bytes, (2 * layer + embedding) * 7);
    c.parallel.distributed_optimizer = false;
    auto replicated = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(replicated.ok());
    EXPECT_DOUBLE_EQ((*replicated)[1].static_bytes, (2 * layer + head) * 16);
}

// A compute-bound GPT block (HBM too fast to matter, no launch cost, every efficiency 1): its
// times are the FLOPs of its products at the peak, whatever their depth K.
TEST(AnalyticalCost, BlockTimesAreItsProductsSplitIntoInputAndWeightGradients) {
    Config c = tinyGpt();
    c.model = {"wide", 2, 1024, 8, 0, 0, 1000, 256, false, true};
    c.parallel.micro_batch_size = 1;
    c.hardware.hbm_gb_per_s = 1e12;
    c.training.attention = TrainingConfig::Attention::Materialized;
    const double T = 256, s = 256, h = 1024, a = 8, d = h / a, peak = 1e11;  // FLOPs per ms
    auto at = [&](double m, double n, double k, double batch = 1) { return 2 * m * n * k * batch / peak; };
    // QKV (T × 3h × h), projection (T × h × h), MLP up and down (T × 4h × h, T × h × 4h);
    // attention: a products Q·Kᵀ (s × s × d) and P·V (s × d × s).
    const double weights = at(T, 3 * h, h) + at(T, h, h) + at(T, 4 * h, h) + at(T, h, 4 * h);
    const double scores = at(s, s, d, a) + at(s, d, s, a);
    const StageCost block = stageOf(c, {0, 1, false, false});
    EXPECT_NEAR(block.forward_ms, weights + scores, 1e-9);
    // W: dW = Xᵀ·dY, K = T tokens deep.
    const double weightGrads = at(h, 3 * h, T) + at(h, h, T) + at(h, 4 * h, T) + at(4 * h, h, T);
    EXPECT_NEAR(*block.backward_weight_ms, weightGrads, 1e-9);
    // I: dX = dY·Wᵀ, and both operands of each attention product.
    const double inputGrads = at(T, h, 3 * h) + at(T, h, h) + at(T, h, 4 * h) + at(T, 4 * h, h) + 2 * scores;
    EXPECT_NEAR(*block.backward_input_ms, inputGrads, 1e-9);
    EXPECT_NEAR(block.backward_ms, inputGrads + weightGrads, 1e-9);
    EXPECT_DOUBLE_EQ(block.recompute_ms, block.forward_ms);
    // Full recomputation repeats the block's forward inside its backward.
    c.training.recompute = TrainingConfig::Recompute::Full;
    EXPECT_NEAR(*stageOf(c, {0, 1, false, false}).backward_input_ms, inputGrads + block.forward_ms, 1e-9);
}

// The element-wise and normalisation kernels stream at the preset's elementwise_gb_per_s; layout
// copies, bias-gradient sums and the products' traffic stay at the HBM rate (here infinite, as
// the tensor cores): a GPT block with dropout on the materialised path, worked kernel by kernel.
TEST(AnalyticalCost, ElementwiseKernelsStreamAtTheirOwnRate) {
    Config c = tinyGpt();  // T = b·s = 256 tokens, h = 64, 4 heads, s = 128
    c.hardware.peak_tflops = 1e9;
    c.hardware.hbm_gb_per_s = 1e12;
    c.hardware.elementwise_gb_per_s = 1;  // 1e6 bytes per ms
    c.training.attention = TrainingConfig::Attention::Materialized;
    c.training.dropout = true;
    const double Th = 256 * 64, ffn = 4 * Th, scores = 2 * 4 * 128.0 * 128;
    // Forward: two norms (read, write: 4 bytes an element), two bias-dropout-residual adds (read
    // two, write one, a byte mask: 7), GELU over 4h (4), the QKV bias added after its GEMM (4 on
    // 3h), softmax (4) and dropout (5) on every score.
    const double forwardBytes = 2 * 4 * Th + 2 * 7 * Th + 4 * ffn + 4 * 3 * Th + (4 + 5) * scores;
    // Input gradient: norms (read x and dy, write dx: 6), each residual's mask (5) and gradient
    // sum (6), GELU (6), softmax (6) and dropout (5) per score.
    const double backwardBytes = 2 * 6 * Th + 2 * (5 + 6) * Th + 6 * ffn + (6 + 5) * scores;
    const StageCost block = stageOf(c, {0, 1, false, false});
    EXPECT_NEAR(block.forward_ms, forwardBytes / 1e6, 1e-6);
    EXPECT_NEAR(*block.backward_input_ms, backwardBytes / 1e6, 1e-6);
    EXPECT_NEAR(*block.backward_weight_ms, 0, 1e-6);
    // Drawing dropout's random numbers: 66 integer operations an element (Philox4x32-10) at
    // int32_tops. At 0.0066 TOPS (6.6e6 an ms) a number takes 1e-5 ms, above the 5e-6 ms of the
    // attention dropout's 5 bytes and the 7e-6 ms of a bias-dropout-add's 7: the forward grows by
    // the difference on every score and every element of the two residuals; the backward reuses
    // the masks and does not change.
    Config drawn = c;
    drawn.hardware.int32_tops = 0.0066;
    const StageCost slower = stageOf(drawn, {0, 1, false, false});
    EXPECT_NEAR(slower.forward_ms - block.forward_ms, scores * (1e-5 - 5e-6) + 2 * Th * (1e-5 - 7e-6), 1e-6);
    EXPECT_NEAR(*slower.backward_input_ms, *block.backward_input_ms, 1e-12);
    // Where memory takes longer (an A100's 19.5 TOPS: 3.4 ps a number), the dropout streams as before.
    drawn.hardware.int32_tops = 19.5;
    EXPECT_NEAR(KernelRoofline(drawn.hardware).dropoutMs(5e6, 1e6), 5.0, 1e-12);
    drawn.hardware.elementwise_gb_per_s = 2039 * 0.85;
    EXPECT_NEAR(KernelRoofline(drawn.hardware).dropoutMs(5e6, 1e6), 1e6 * 66 / 19.5e9, 1e-12);
    // Unset, the element-wise rate is the streaming rate: the same costs as naming it.
    Config preset = presetConfig("gpt3-13b", "a100-80g", 4);
    Config named = preset;
    named.hardware.elementwise_gb_per_s = named.hardware.hbm_gb_per_s * named.hardware.hbm_efficiency;
    const StageCost unset = stageOf(preset, {2, 12, false, false}), given = stageOf(named, {2, 12, false, false});
    EXPECT_DOUBLE_EQ(unset.forward_ms, given.forward_ms);
    EXPECT_DOUBLE_EQ(*unset.backward_input_ms, *given.backward_input_ms);
    EXPECT_DOUBLE_EQ(*unset.backward_weight_ms, *given.backward_weight_ms);
}

// The gradient reduction runs over the right group: its ranks, the nodes they span and their bus
// bandwidth worked by hand; the collective's price is NCCL's model (collectives_test checks it).
TEST(AnalyticalCost, GradientReductionRunsOverTheRightGroup) {
    Config c = tinyGpt();
    const Collectives nccl(c.hardware);
    EXPECT_EQ(stageOf(c, {0, 2, true, false}).reduce_grad_ms, 0);
    // dp = 8 with pp = 2 on 8-GPU nodes: device 0's replicas are ranks 0–7, one node: an
    // all-reduce of fp32 gradients over NVLink (100 GB/s).
    c.parallel.dp = 8;
    const double params = 2 * (16384 + 32768 + 256) + 1000 * 64 + 128 * 64;
    EXPECT_NEAR(stageOf(c, {0, 2, true, false}).reduce_grad_ms, nccl.allReduceMs(params * 4, {8, 1, 1e8}), 1e-12);
    // dp = 16: two nodes; each holds 8 of the replicas, 8 rings through 8 ports of 10 GB/s.
    c.parallel.dp = 16;
    EXPECT_NEAR(stageOf(c, {0, 2, true, false}).reduce_grad_ms, nccl.allReduceMs(params * 4, {16, 2, 8e7}), 1e-12);
    // tp = 4: a node holds 2 of the 16 replicas, 8 nodes, 2 ports of 10 GB/s (tp divides the bytes).
    c.parallel.tp = 4;
    EXPECT_NEAR(stageOf(c, {0, 2, true, false}).reduce_grad_ms, nccl.allReduceMs(params, {16, 8, 2e7}), 1e-12);
    // Chimera keeps two copies of every stage: even at dp = 1 they sum their gradients, here
    // over the pipeline's NVLink.
    c.parallel.tp = 1;
    c.parallel.dp = 1;
    c.parallel.scheme = Scheme::Chimera;
    EXPECT_NEAR(stageOf(c, {0, 2, true, false}).reduce_grad_ms, nccl.allReduceMs(params * 4, {2, 1, 1e8}), 1e-12);
}

// With overlap_grad_reduce the gradients go in Megatron-Core's buckets, max(40M, 1M·dp)
// parameters each, every one a collective with its own latency: the cost grows with dp per
// bucket. Worked by hand for 400M parameters over NVLink (dp 8) and across nodes (dp 64).
TEST(AnalyticalCost, OverlappedGradientsAreReducedBucketByBucket) {
    Config c = tinyGpt();
    const Collectives nccl(c.hardware);
    c.training.overlap_grad_reduce = true;
    const double params = 400e6, bytes = 4 * params;
    c.parallel.dp = 8;  // 10 buckets of 40M parameters inside one node: 100 GB/s
    auto model = AnalyticalCostModel::create(c);
    ASSERT_TRUE(model.ok());
    const double bucket8 = nccl.allReduceMs(bytes / 10, {8, 1, 1e8});
    // 160 MB inside a node: NCCL's ring with Simple, 8.4 µs + 14 NVLink steps of 3.4 µs.
    EXPECT_NEAR(bucket8, 2.0 * 7 / 8 * bytes / 10 / 1e8 + (8.4 + 14 * 3.4) * 1e-3, 1e-12);
    EXPECT_NEAR(model->gradientReductionMs(params, 0), 10 * bucket8, 1e-9);
    // Under a long backward only the last bucket stays; under a short one, what is left.
    EXPECT_NEAR(model->gradientReductionMs(params, 1e9), bucket8, 1e-9);
    EXPECT_NEAR(model->gradientReductionMs(params, 5 * bucket8), 5 * bucket8, 1e-9);
    // dp 64 on 8 nodes: buckets of max(40M, 64M) = 64M, 7 of them (ceil 6.25), 8 rings of
    // 10 GB/s: 7 latencies where one collective paid one.
    c.parallel.dp = 64;
    model = AnalyticalCostModel::create(c);
    ASSERT_TRUE(model.ok());
    const CollectiveGroup nodes8{64, 8, 8e7};
    EXPECT_NEAR(model->gradientReductionMs(params, 0), 7 * nccl.allReduceMs(bytes / 7, nodes8), 1e-9);
    // Without the overlap there are no buckets: one collective over the whole buffer.
    c.training.overlap_grad_reduce = false;
    model = AnalyticalCostModel::create(c);
    ASSERT_TRUE(model.ok());
    EXPECT_NEAR(model->gradientReductionMs(params, 0), nccl.allReduceMs(bytes, nodes8), 1e-9);
}

// With the distributed optimizer the bf16 weights come back by all-gather, bucket by bucket;
// overlap_param_gather runs it in the next step's first forwards (Megatron-Core's pre-hooks):
// what that window cannot cover stays, and the step's first bucket always does. Worked by hand
// for 400M parameters over NVLink (dp 8): 10 buckets of 40M, each reduce-scattered (2 bytes a
// gradient in bf16) and gathered (2 bytes a weight): the same 80 MB collective either way.
TEST(AnalyticalCost, OverlappedWeightGatherLeavesWhatItsForwardCannotCover) {
    Config c = tinyGpt();
    const Collectives nccl(c.hardware);
    c.training.overlap_grad_reduce = c.training.overlap_param_gather = c.training.grad_reduce_in_bf16 = true;
    c.parallel.distributed_optimizer = true;
    c.parallel.dp = 8;
    auto model = AnalyticalCostModel::create(c);
    ASSERT_TRUE(model.ok());
    const double params = 400e6, bucket = nccl.allGatherMs(2 * params / 10, {8, 1, 1e8});
    const double longBackward = 1e9;  // leaves the reduce-scatter its last bucket
    // No window: every gather stays; a long one: none but, where the stage opens the step, the first.
    EXPECT_NEAR(model->gradientReductionMs(params, longBackward, 0, false), bucket + 10 * bucket, 1e-9);
    EXPECT_NEAR(model->gradientReductionMs(params, longBackward, 1e9, false), bucket, 1e-9);
    EXPECT_NEAR(model->gradientReductionMs(params, longBackward, 1e9, true), 2 * bucket, 1e-9);
    // A window of 4 buckets' gathers leaves 6.
    EXPECT_NEAR(model->gradientReductionMs(params, longBackward, 4 * bucket, true), bucket + 6 * bucket, 1e-9);
    // Without the overlap the whole gather stays, whatever the window.
    c.training.overlap_param_gather = false;
    model = AnalyticalCostModel::create(c);
    ASSERT_TRUE(model.ok());
    EXPECT_NEAR(model->gradientReductionMs(params, longBackward, 1e9, true), bucket + 10 * bucket, 1e-9);
}

TEST(AnalyticalCost, MfuIsModelFlopsOverStepGpusAndPeak) {
    Config c = tinyGpt();
    c.parallel.scheme = Scheme::OneFOneB;
    c.parallel.dp = 2;
    c.parallel.tp = 2;
    c.parallel.global_batch_size = 16;  // 4 micro-batches of 2 per replica
    auto plan = buildPlan(c);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    auto sim = Simulator::run(*plan);
    ASSERT_TRUE(sim.ok());
    // Megatron's count for the whole step: 72·B·s·L·h²·(1 + s/6h + V/12Lh), B = 16.
    const double B = 16, s = 128, L = 4, h = 64, V = 1000;
    const double flops = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
    const double gpus = 2 * 2 * 2;  // pp × dp × tp
    EXPECT_NEAR(sim->flops.model_flops / flops, 1.0, 1e-12);
    EXPECT_EQ(sim->flops.gpus, gpus);
    EXPECT_NEAR(sim->flops.mfu, flops / (sim->makespan_ms / 1e3 * gpus * 100e12), 1e-12);
    EXPECT_DOUBLE_EQ(sim->flops.hfu, sim->flops.mfu);  // nothing recomputed
}

TEST(AnalyticalCost, CostsFasterThanThePeakAreRefused) {
    // 1F1B on 2 devices, 4 micro-batches of forward 1 ms and backward 2: 4 × 3 ms a device and
    // one forward and backward of fill and drain, a step of 15 ms. Each stage counts 4 forwards
    // of 1e11 FLOP and 4 backwards of 2e11: 2.4e12 FLOP on 2 GPUs in 15 ms is 80 TFLOP/s each.
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 4);
    for (auto& stage : plan.stages) stage.cost.forward_flops = 1e11;
    plan.info.peak_tflops = 100;
    auto sim = Simulator::run(plan);
    ASSERT_TRUE(sim) << sim.error().message;
    EXPECT_DOUBLE_EQ(sim->makespan_ms, 15);
    EXPECT_NEAR(sim->flops.mfu, 0.8, 1e-12);
    EXPECT_TRUE(Validator::validate(plan).ok());
    // At a peak of 50 the step would use 160% of it: refused by the simulator and the validator,
    // naming the fastest forward (stage 0 on a tie: 1e11 FLOP in 1 ms is 100 TFLOP/s).
    plan.info.peak_tflops = 50;
    const std::string expected = "stages[0].forward_flops: 1e+11 FLOP in forward_ms 1 (100 TFLOP/s per GPU) give the "
                                 "step an MFU of 160% (HFU 160%) of peak_tflops 50: its costs claim more than the "
                                 "hardware computes";
    auto refused = Simulator::run(plan);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message, expected);
    EXPECT_EQ(Validator::validate(plan).summary(), expected);
    // The passes' trials time plans without the summary, and so without the check.
    EXPECT_TRUE(Simulator::run(plan, SimOptions::timelineOnly()));
}

TEST(AnalyticalCost, EfficienciesOfOneOnLongSequencesAreRefusedByTheirKeys) {
    // MFU counts the whole attention, 4·b·s²·h a layer; FlashAttention computes the causal half.
    // At 131072 tokens attention is most of a LLaMA-2 13B layer: with the preset's efficiencies
    // the step's MFU is below 100%, with every efficiency 1 it was printed as 120%.
    Config c = presetConfig("llama2-13b", "a100-80g", 8);
    c.model.sequence_length = 131072;
    c.parallel.global_batch_size = 32;  // 32 micro-batches: the pipeline's fill and drain are a small part
    auto preset = buildPlan(c);
    ASSERT_TRUE(preset.ok()) << preset.error().message;
    auto fine = Simulator::run(*preset);
    ASSERT_TRUE(fine.ok()) << fine.error().message;
    EXPECT_LT(fine->flops.hfu, 1);
    c.hardware.gemm_efficiency = c.hardware.flash_forward_efficiency = c.hardware.flash_backward_efficiency = 1;
    c.hardware.hbm_efficiency = 1;
    c.hardware.kernel_overhead_us = 0;
    auto plan = buildPlan(c);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    const CostNames names = costNamesOf(c);
    auto refused = Simulator::run(*plan, {.names = &names});
    ASSERT_FALSE(refused.ok());
    const std::string message = refused.error().message;
    EXPECT_EQ(message.rfind("stage ", 0), 0u) << message;
    EXPECT_NE(message.find("'s forward_flops (from model and hardware): "), std::string::npos) << message;
    EXPECT_NE(message.find(" of hardware.peak_tflops 312: its costs claim more than the hardware computes "
                           "(hardware.gemm_efficiency 1, hardware.flash_forward_efficiency 1 and "
                           "hardware.flash_backward_efficiency 1 are the shares of it the kernels reach)"),
              std::string::npos)
        << message;
}

TEST(AnalyticalCost, KeyValueHeadsMustSplitEvenlyOverTensorParallelism) {
    // LLaMA-3 70B: 64 heads, 8 KV heads. Megatron-LM refuses tp 16 (8 % 16 != 0); tp 8 is fine.
    Config c = presetConfig("llama3-70b", "h100", 2, 1, 16);
    auto refused = computeStageCosts(c, evenLayout(80, 2));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "model.kv_heads: 8 KV heads are not divisible by parallel.tp = 16 (each tensor-parallel rank needs whole "
              "KV heads, as in Megatron-LM)");
    c.parallel.tp = 8;
    EXPECT_TRUE(computeStageCosts(c, evenLayout(80, 2)).ok());
}

TEST(AnalyticalCost, PlanCostsAreNamedInTheConfigsWords) {
    Config unit;
    unit.unit_costs = UnitCosts{};
    const CostNames units = costNamesOf(unit);
    // Every stage costs the unit costs: the key, whichever stage it was.
    EXPECT_EQ(units.field(2, "forward_ms"), "unit_costs.forward");
    EXPECT_EQ(units.field(0, "activation_bytes"), "unit_costs.activation_bytes");
    EXPECT_EQ(units.field(1, "send_bytes"), "stage 1's send_bytes (from unit_costs)");
    EXPECT_EQ(units.peak, "peak_tflops");
    // The A100-80G preset: 312 TFLOP/s, 2039 GB/s of HBM, links of 25 and 300 GB/s.
    const CostNames analytical = costNamesOf(presetConfig("llama2-13b", "a100-80g", 8));
    EXPECT_EQ(analytical.field(3, "send_bytes"), "stage 3's send_bytes (from model and hardware)");
    EXPECT_EQ(analytical.field(7, "backward_ms"),
              "stage 7's backward_ms (from model and hardware, at hardware.peak_tflops 312 and "
              "hardware.hbm_gb_per_s 2039)");
    EXPECT_EQ(analytical.field(0, "reduce_grad_ms"),
              "stage 0's reduce_grad_ms (from model and hardware, over hardware.inter_node_gb_per_s 25 and "
              "hardware.intra_node_gb_per_s 300)");
    EXPECT_EQ(analytical.peak, "hardware.peak_tflops");
    // A plan file's own fields where no config is given.
    EXPECT_EQ(planFieldNames().field(3, "send_bytes"), "stages[3].send_bytes");
    EXPECT_EQ(planFieldNames().peak, "peak_tflops");
}

}  // namespace
}  // namespace mario
