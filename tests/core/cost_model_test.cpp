// The cost model against numbers worked out by hand from the published formulas
// (Megatron-LM's FLOP count, Korthikanti et al.'s activation bytes, Adam's 18 bytes/param),
// not against the implementation's own expressions.
#include <gtest/gtest.h>

#include <numeric>

#include <nlohmann/json.hpp>

#include "core/cost/AnalyticalCostModel.h"
#include "core/cost/CostModel.h"
#include "core/cost/ProfileCostModel.h"
#include "core/model/PresetLibrary.h"

namespace mario {
namespace {

const std::string kProfiles = std::string(MARIO_TEST_SOURCE_DIR) + "/profiles";

Config presetConfig(const std::string& model, const std::string& hardware, int pp, int dp = 1, int tp = 1) {
    PresetLibrary presets(kProfiles);
    Config c;
    auto m = presets.model(model);
    auto h = presets.hardware(hardware);
    EXPECT_TRUE(m.ok() && h.ok());
    if (m) c.model = *m;
    if (h) c.hardware = *h;
    c.parallel.pp = pp;
    c.parallel.dp = dp;
    c.parallel.tp = tp;
    return c;
}

// A tiny GPT: s = 128, b = 2, h = 64, a = 4 heads, ffn 4h, vocab 1000, 4 layers.
Config tinyGpt() {
    Config c;
    c.model = {"tiny", 4, 64, 4, 0, 0, 1000, 128, false, true};
    c.hardware = {"hw", 100, 0.5, 16, 1000, 100, 10, 0.01, 8};
    c.parallel.pp = 2;
    c.parallel.micro_batch_size = 2;
    return c;
}

AnalyticalCostModel analytical(const Config& c) {
    auto m = AnalyticalCostModel::create(c);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    return *m;
}

TEST(CostModel, LayerFlopsEqualMegatronForGpt) {
    // Megatron (Narayanan et al. 2021): a GPT layer's forward is 24·b·s·h² + 4·b·s²·h FLOPs.
    Config c = presetConfig("gpt3-13b", "a100-40g", 4);
    c.parallel.micro_batch_size = 2;
    const double b = 2, s = 2048, h = 5120, V = 51200;
    auto model = analytical(c);
    EXPECT_DOUBLE_EQ(model.layerForwardFlops(), 24 * b * s * h * h + 4 * b * s * s * h);
    EXPECT_DOUBLE_EQ(model.headForwardFlops(), 2 * b * s * h * V);
}

TEST(CostModel, Gpt13bStepMatchesMegatronTotal) {
    // One step without recompute: 72·B·s·L·h²·(1 + s/6h + V/12Lh) FLOPs for B sequences,
    // i.e. forward + backward (= 3 × forward) over all stages.
    Config c = presetConfig("gpt3-13b", "a100-40g", 4);
    auto costs = computeStageCosts(c, evenLayout(40, 4));
    ASSERT_TRUE(costs.ok()) << costs.error().message;
    double stepMs = 0;
    for (const auto& stage : *costs) stepMs += stage.forward_ms + stage.backward_ms;
    const double B = 1, s = 2048, L = 40, h = 5120, V = 51200;
    double flops = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
    // The preset's GEMM efficiency: half of peak, times 2048 / (2048 + 1024) tokens for one
    // sequence per micro-batch.
    double expectedMs = flops / (312e12 * 0.5 * 2048.0 / 3072.0) * 1e3;
    EXPECT_NEAR(stepMs / expectedMs, 1.0, 1e-12);
    // And the magnitude: 1.68e14 FLOPs, about 1.62 s on one A100 at a third of peak.
    EXPECT_NEAR(stepMs, 1616.8, 0.1);
}

TEST(CostModel, LargerMicroBatchesRunCloserToPeakAndTensorParallelismCostsCommunication) {
    Config c = tinyGpt();
    c.hardware.mfu_half_tokens = 256;  // b·s = 256 tokens: half of the achievable efficiency
    auto costs = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(costs.ok());
    EXPECT_DOUBLE_EQ((*costs)[0].forward_ms, 2 * 33554432.0 / 25e12 * 1e3);
    // tp = 2: half the FLOPs per GPU, plus per layer two ring all-reduces of 2·s·b·h bytes
    // over the 100 GB/s node link (2·(t−1)/t of the bytes, 2·(t−1) latencies each).
    c.hardware.mfu_half_tokens = 0;
    c.parallel.tp = 2;
    auto split = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(split.ok());
    const double ring = 2.0 * 1 / 2 * (2.0 * 128 * 2 * 64) / 100e9 * 1e3 + 2 * 1 * 0.01;
    EXPECT_DOUBLE_EQ((*split)[0].forward_ms, 2 * 33554432.0 / 2 / 50e12 * 1e3 + 2 * (2 * ring));
}

TEST(CostModel, GroupedQueryAttentionShrinksKeyValueProjections) {
    // LLaMA-3 8B layer: q,o 2·4096², k,v 2·4096·1024, SwiGLU 3·4096·14336, two RMSNorms.
    Config c = presetConfig("llama3-8b", "h100", 8);
    auto model = analytical(c);
    EXPECT_DOUBLE_EQ(model.layerParameters(), 33554432.0 + 8388608.0 + 176160768.0 + 8192.0);
}

TEST(CostModel, ParameterCountsOfKnownModels) {
    EXPECT_GE(analytical(presetConfig("gpt3-13b", "a100-40g", 1)).modelParameters(), 12.8e9);
    EXPECT_LE(analytical(presetConfig("gpt3-13b", "a100-40g", 1)).modelParameters(), 13.2e9);
    EXPECT_GE(analytical(presetConfig("llama2-7b", "a100-40g", 1)).modelParameters(), 6.6e9);
    EXPECT_LE(analytical(presetConfig("llama2-7b", "a100-40g", 1)).modelParameters(), 6.9e9);
    EXPECT_NEAR(analytical(presetConfig("llama2-13b", "a100-40g", 1)).modelParameters(), 13.0e9, 0.1e9);
    EXPECT_NEAR(analytical(presetConfig("llama3-8b", "h100", 1)).modelParameters(), 8.03e9, 0.05e9);
    EXPECT_NEAR(analytical(presetConfig("llama3-70b", "h100", 1)).modelParameters(), 70.6e9, 0.5e9);
    EXPECT_NEAR(analytical(presetConfig("gpt3-1.6b", "a100-40g", 1)).modelParameters(), 1.7e9, 0.1e9);
}

TEST(CostModel, ActivationBytesFollowKorthikanti) {
    // s·b·h·(34 + 5·a·s/h) = 128·2·64·(34 + 5·4·128/64) = 16384·74 = 1,212,416 bytes a layer.
    Config c = tinyGpt();
    auto costs = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(costs.ok()) << costs.error().message;
    EXPECT_DOUBLE_EQ((*costs)[0].activation_bytes, 2 * 1212416.0);
    // The last stage also keeps fp32 logits: 4·s·b·V = 4·128·2·1000.
    EXPECT_DOUBLE_EQ((*costs)[1].activation_bytes, 2 * 1212416.0 + 1024000.0);
    // Tensor parallelism with sequence parallelism divides everything by t.
    c.parallel.tp = 2;
    auto split = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(split.ok());
    EXPECT_DOUBLE_EQ((*split)[0].activation_bytes, 1212416.0);
}

TEST(CostModel, CheckpointSendAndStaticBytes) {
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
}

TEST(CostModel, BackwardIsTwiceForwardAndRecomputeRepeatsIt) {
    Config c = tinyGpt();
    auto costs = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(costs.ok());
    // Forward of one tiny layer: 24·2·128·64² + 4·2·128²·64 = 33,554,432 FLOPs, two layers,
    // at 100 TFLOP/s × 0.5.
    EXPECT_DOUBLE_EQ((*costs)[0].forward_ms, 2 * 33554432.0 / 50e12 * 1e3);
    for (const auto& stage : *costs) {
        EXPECT_DOUBLE_EQ(stage.backward_ms, 2 * stage.forward_ms);
        EXPECT_DOUBLE_EQ(stage.recompute_ms, stage.forward_ms);
    }
}

TEST(CostModel, GradientAllReduceOnlyWithDataParallelism) {
    Config c = tinyGpt();
    auto alone = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ((*alone)[0].reduce_grad_ms, 0);
    EXPECT_GT((*alone)[0].optimizer_ms, 0);
    // dp = 8 with pp = 2 on 8-GPU nodes: in Megatron-LM's rank order device 0's replicas are
    // ranks 0–7, one node, so the ring all-reduce of 2-byte gradients runs over NVLink
    // (100 GB/s here): 2·7/8 of the bytes, plus 2·7 link latencies.
    c.parallel.dp = 8;
    auto reduced = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(reduced.ok());
    const double params = 2 * (16384 + 32768 + 256) + 1000 * 64 + 128 * 64;
    EXPECT_NEAR((*reduced)[0].reduce_grad_ms, 2.0 * 7 / 8 * params * 2 / 100e9 * 1e3 + 14 * 0.01, 1e-12);
    // dp = 16: device 0's replicas are ranks 0–15, two nodes, so InfiniBand (10 GB/s) paces it.
    c.parallel.dp = 16;
    auto across = computeStageCosts(c, evenLayout(4, 2));
    ASSERT_TRUE(across.ok());
    EXPECT_NEAR((*across)[0].reduce_grad_ms, 2.0 * 15 / 16 * params * 2 / 10e9 * 1e3 + 30 * 0.01, 1e-12);
}

TEST(CostModel, EvenLayoutCoversAllLayersWithEndsMarked) {
    for (int layers : {24, 26, 40, 80}) {
        for (int stages : {1, 2, 3, 8, 16}) {
            auto layout = evenLayout(layers, stages);
            ASSERT_EQ(layout.size(), std::size_t(stages));
            int covered = 0, next = 0;
            for (std::size_t i = 0; i < layout.size(); ++i) {
                EXPECT_EQ(layout[i].begin_layer, next);
                next = layout[i].end_layer;
                covered += layout[i].layerCount();
                EXPECT_EQ(layout[i].has_embedding, i == 0);
                EXPECT_EQ(layout[i].has_head, i + 1 == layout.size());
                EXPECT_LE(layout[i].layerCount(), layers / stages + 1);
                EXPECT_GE(layout[i].layerCount(), layers / stages);
            }
            EXPECT_EQ(covered, layers);
        }
    }
    std::vector<int> counts;
    for (const auto& l : evenLayout(26, 8)) counts.push_back(l.layerCount());
    EXPECT_EQ(counts, (std::vector<int>{3, 3, 3, 4, 4, 3, 3, 3}));  // extras in the middle
}

TEST(CostModel, ProfileFitsAreLinearInBlocks) {
    auto profile = ProfileCostModel::fromJson(nlohmann::json::parse(R"({
        "format": "mario-profile", "version": 1, "micro_batch_size": 1, "sequence_length": 128,
        "forward_ms": {"a": 2, "b": 0.5}, "backward_ms": {"a": 4, "b": 1},
        "recompute_ms": {"a": 2, "b": 0.25}, "activation_bytes": {"a": 100, "b": 7},
        "static_bytes": {"a": 1000, "b": 30}, "checkpoint_bytes": 16, "send_bytes": 16,
        "optimizer_ms": {"a": 0.5, "b": 0.1}, "head": {"forward_ms": 3, "static_bytes": 500, "optimizer_ms": 0.2}})"),
                                              "");
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    Config c = tinyGpt();
    c.parallel.micro_batch_size = 1;
    std::vector<StageLayout> layouts = {{0, 3, true, false}, {3, 4, false, true}};
    auto costs = profile->stageCosts(c, layouts);
    ASSERT_TRUE(costs.ok()) << costs.error().message;
    EXPECT_DOUBLE_EQ((*costs)[0].forward_ms, 6.5);  // 2·3 + 0.5
    EXPECT_DOUBLE_EQ((*costs)[0].backward_ms, 13);  // 4·3 + 1
    EXPECT_DOUBLE_EQ((*costs)[0].recompute_ms, 6.25);
    EXPECT_DOUBLE_EQ((*costs)[0].activation_bytes, 307);
    EXPECT_DOUBLE_EQ((*costs)[0].static_bytes, 3030);
    EXPECT_DOUBLE_EQ((*costs)[0].send_bytes, 16);
    EXPECT_DOUBLE_EQ((*costs)[1].forward_ms, 2.5 + 3);  // one block plus the head's extra
    EXPECT_DOUBLE_EQ((*costs)[1].static_bytes, 1030 + 500);
    EXPECT_DOUBLE_EQ((*costs)[1].send_bytes, 0);
    // The optimizer step: per block as fitted, plus the head's own weights' step.
    EXPECT_DOUBLE_EQ((*costs)[0].optimizer_ms, 0.5 * 3 + 0.1);
    EXPECT_DOUBLE_EQ((*costs)[1].optimizer_ms, 0.5 + 0.1 + 0.2);
    // Twice the micro-batch: slopes double, the framework's intercept does not.
    c.parallel.micro_batch_size = 2;
    auto doubled = profile->stageCosts(c, layouts);
    ASSERT_TRUE(doubled.ok());
    EXPECT_DOUBLE_EQ((*doubled)[0].forward_ms, 12.5);
    EXPECT_DOUBLE_EQ((*doubled)[0].static_bytes, 3030);
    EXPECT_DOUBLE_EQ((*doubled)[1].optimizer_ms, 0.8);  // weights do not grow with the batch
    // Another sequence length is not something a linear fit in blocks can answer.
    c.model.sequence_length = 256;
    auto wrong = profile->stageCosts(c, layouts);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().message.find("sequence length"), std::string::npos);
}

TEST(CostModel, ProfileSplitBackwardFitsSetIAndW) {
    const nlohmann::json base = nlohmann::json::parse(R"({
        "format": "mario-profile", "version": 1, "micro_batch_size": 1,
        "forward_ms": {"a": 2, "b": 0}, "backward_ms": {"a": 4, "b": 0}, "recompute_ms": {"a": 2, "b": 0},
        "activation_bytes": {"a": 100, "b": 0}, "static_bytes": {"a": 1000, "b": 0},
        "checkpoint_bytes": 16, "send_bytes": 16, "head": {"backward_ms": 6}})");
    Config c = tinyGpt();
    c.parallel.micro_batch_size = 1;
    const std::vector<StageLayout> layouts = {{0, 3, true, false}, {3, 4, false, true}};
    // Without them, I and W are each half of B.
    auto plain = ProfileCostModel::fromJson(base, "");
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    const auto halves = *plain->stageCosts(c, layouts);
    EXPECT_FALSE(halves[0].backward_input_ms.has_value());
    EXPECT_DOUBLE_EQ(halves[0].inputGradMs(), 6);
    // With them: per block as fitted; the head's whole-backward extra goes half to each.
    nlohmann::json split = base;
    split["backward_input_ms"] = {{"a", 1.5}, {"b", 0.5}};
    split["backward_weight_ms"] = {{"a", 3}, {"b", 0}};
    auto profile = ProfileCostModel::fromJson(split, "");
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    const auto costs = *profile->stageCosts(c, layouts);
    EXPECT_DOUBLE_EQ(costs[0].inputGradMs(), 5);      // 1.5·3 + 0.5
    EXPECT_DOUBLE_EQ(costs[0].weightGradMs(), 9);     // 3·3
    EXPECT_DOUBLE_EQ(costs[1].inputGradMs(), 2 + 3);  // one block, half the head's 6
    EXPECT_DOUBLE_EQ(costs[1].weightGradMs(), 3 + 3);
    EXPECT_EQ(profile->toJson()["backward_input_ms"], split["backward_input_ms"]);
}

TEST(CostModel, ProfileErrorsNameTheirPath) {
    auto bad = ProfileCostModel::fromJson(nlohmann::json::parse(R"({"micro_batch_size": 1,
        "forward_ms": {"a": "x"}, "checkpoint_bytes": 0, "send_bytes": 0})"),
                                          "");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, "forward_ms.a: expected a number");
}

TEST(CostModel, ShippedProfileDrivesComputeStageCosts) {
    Config c = presetConfig("gpt3-1.6b", "a100-40g", 4);
    c.profile = kProfiles + "/example-gpt-small.profile.json";
    auto costs = computeStageCosts(c, evenLayout(32, 4));
    ASSERT_TRUE(costs.ok()) << costs.error().message;
    EXPECT_DOUBLE_EQ((*costs)[1].forward_ms, 1.72 * 8 + 0.35);
    EXPECT_GT((*costs)[3].forward_ms, (*costs)[1].forward_ms);  // the LM head

    // Settings that never passed the config reader (the workbench's panel): the refusal names
    // the profile. example-gpt-small was measured at sequence length 2048.
    c.model.sequence_length = 4096;
    auto misfit = computeStageCosts(c, evenLayout(32, 4));
    ASSERT_FALSE(misfit.ok());
    EXPECT_EQ(misfit.error().message,
              "profile \"example-gpt-small\": measured at sequence length 2048 but model.sequence_length is 4096");
}

TEST(CostModel, UnitModeGivesEveryStageTheSameCosts) {
    Config c;
    c.unit_costs = UnitCosts{1, 2, 1, 1000, 10, 5};
    c.parallel.pp = 4;
    auto costs = computeStageCosts(c, evenLayout(0, 4));
    ASSERT_TRUE(costs.ok());
    ASSERT_EQ(costs->size(), 4u);
    for (const auto& stage : *costs) {
        EXPECT_EQ(stage.forward_ms, 1);
        EXPECT_EQ(stage.backward_ms, 2);
        EXPECT_EQ(stage.recompute_ms, 1);
        EXPECT_EQ(stage.activation_bytes, 1000);
        EXPECT_EQ(stage.checkpoint_bytes, 10);
        EXPECT_EQ(stage.static_bytes, 5);
        EXPECT_EQ(stage.send_bytes, 0);
    }
    LinkSpec link = pipelineLink(c);
    EXPECT_EQ(link.latency_ms, 0);
    EXPECT_EQ(link.bandwidth_gb_per_s, 0);
}

TEST(CostModel, LinkIsNvlinkInsideANodeAndInfinibandAcross) {
    // 4 stages × tp 2 = 8 GPUs: one node, NVLink at 300 GB/s.
    LinkSpec inside = pipelineLink(presetConfig("gpt3-13b", "a100-40g", 4, 1, 2));
    EXPECT_EQ(inside.bandwidth_gb_per_s, 300);
    EXPECT_EQ(inside.latency_ms, 0.01);
    // 16 stages do not fit in an 8-GPU node: InfiniBand HDR, 25 GB/s a GPU.
    LinkSpec across = pipelineLink(presetConfig("gpt3-13b", "a100-40g", 16));
    EXPECT_EQ(across.bandwidth_gb_per_s, 25);
    EXPECT_EQ(pipelineLink(presetConfig("gpt3-13b", "h100", 16)).bandwidth_gb_per_s, 50);
    // pp 8 × dp 2: 16 GPUs in Megatron-LM's order, the order launch exports run. Device d is
    // ranks 2d and 2d + 1, so the hop from device 3 (ranks 6, 7) to 4 (ranks 8, 9) leaves the
    // node: InfiniBand, though the 8 pipeline devices alone would fit one node.
    EXPECT_EQ(pipelineLink(presetConfig("gpt3-13b", "a100-40g", 8, 2)).bandwidth_gb_per_s, 25);
    // pp 4 × dp 2: all 8 ranks on one node.
    EXPECT_EQ(pipelineLink(presetConfig("gpt3-13b", "a100-40g", 4, 2)).bandwidth_gb_per_s, 300);
}

TEST(CostModel, LayoutsOutsideTheModelAreErrors) {
    Config c = tinyGpt();
    auto costs = computeStageCosts(c, {{0, 2, true, false}, {2, 6, false, true}});
    ASSERT_FALSE(costs.ok());
    EXPECT_EQ(costs.error().message.rfind("layouts[1]:", 0), 0u) << costs.error().message;
}

}  // namespace
}  // namespace mario
