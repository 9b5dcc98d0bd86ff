// The cost model against numbers worked out by hand from the published formulas
// (Megatron-LM's FLOP count, Korthikanti et al.'s activation bytes, Adam's 18 bytes/param),
// not against the implementation's own expressions.
#include <gtest/gtest.h>

#include <array>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/cost/AnalyticalCostModel.h"
#include "core/cost/CostModel.h"
#include "core/cost/ProfileCostModel.h"
#include "core/io/PresetLibrary.h"
#include "core/io/ProfileJson.h"
#include "core/session/PlanBuilder.h"
#include "tests/core/CostTestConfigs.h"

namespace mario {
namespace {

const std::string kProfiles = std::string(MARIO_TEST_SOURCE_DIR) + "/profiles";

using testing::presetConfig;
using testing::tinyGpt;

// A profile as its file gives it: io/ProfileJson reads the fits, the cost model costs them.
Result<ProfileCostModel> profileFrom(const nlohmann::json& object) {
    auto fits = profileFromJson(object, "");
    if (!fits) return fits.error();
    return ProfileCostModel(*fits);
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
    auto profile = profileFrom(nlohmann::json::parse(R"({
        "format": "mario-profile", "version": 1, "micro_batch_size": 1, "sequence_length": 128,
        "forward_ms": {"a": 2, "b": 0.5}, "backward_ms": {"a": 4, "b": 1},
        "recompute_ms": {"a": 2, "b": 0.25}, "activation_bytes": {"a": 100, "b": 7},
        "static_bytes": {"a": 1000, "b": 30}, "checkpoint_bytes": 16, "send_bytes": 16,
        "optimizer_ms": {"a": 0.5, "b": 0.1}, "head": {"forward_ms": 3, "static_bytes": 500, "optimizer_ms": 0.2}})"));
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
    nlohmann::json split = base;
    auto plain = profileFrom(base);
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    const auto halves = *plain->stageCosts(c, layouts);
    EXPECT_FALSE(halves[0].backward_input_ms.has_value());
    EXPECT_DOUBLE_EQ(halves[0].inputGradMs(), 6);
    // With them: per block as fitted; the head's whole-backward extra goes half to each. The
    // first stage's input is token ids: mario-executor's I there makes nothing and keeps the
    // whole graph, and its W is the whole backward (what the fits measured is that executor's).
    split["backward_input_ms"] = {{"a", 1.5}, {"b", 0.5}};
    split["backward_weight_ms"] = {{"a", 3}, {"b", 0}};
    auto profile = profileFrom(split);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    const auto costs = *profile->stageCosts(c, {{0, 2, true, false}, {2, 3, false, false}, {3, 4, false, true}});
    EXPECT_DOUBLE_EQ(costs[0].inputGradMs(), 0);
    EXPECT_DOUBLE_EQ(costs[0].weightGradMs(), 4 * 2);  // B of two blocks
    EXPECT_DOUBLE_EQ(costs[0].weightGradBytes(), costs[0].activation_bytes);
    EXPECT_DOUBLE_EQ(costs[1].inputGradMs(), 1.5 + 0.5);
    EXPECT_DOUBLE_EQ(costs[1].weightGradMs(), 3);
    EXPECT_DOUBLE_EQ(costs[2].inputGradMs(), 2 + 3);  // one block, half the head's 6
    EXPECT_DOUBLE_EQ(costs[2].weightGradMs(), 3 + 3);
    // Without a measured split the first stage keeps StageCost's halves (a profile made by hand).
    EXPECT_DOUBLE_EQ(halves[0].weightGradMs(), 6);
    EXPECT_EQ(profileToJson(*profileFromJson(split, ""))["backward_input_ms"], split["backward_input_ms"]);
}

TEST(CostModel, ProfileErrorsNameTheirPath) {
    auto bad = profileFromJson(nlohmann::json::parse(R"({"micro_batch_size": 1,
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

TEST(CostModel, AProfilesCheckpointAboveAStagesActivationsIsRefused) {
    // 100 bytes of activations a block and a checkpoint of 250: stages of 2 blocks keep 200 after
    // a full forward, less than a checkpointed one would (what `mario validate` refuses in the
    // plan written from them); stages of 3 blocks keep 300.
    ProfileFits fits;
    fits.forward_ms = fits.backward_ms = fits.recompute_ms = {1, 0};
    fits.activation_bytes = {100, 0};
    fits.checkpoint_bytes = 250;
    const ProfileCostModel model(fits);
    Config c;
    auto refused = model.stageCosts(c, evenLayout(8, 4));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "stage 0 (layers [0, 2)): checkpoint_bytes 250 is larger than activation_bytes 200 (a checkpoint keeps "
              "part of the activations)");
    // The config reader's question about the profile alone (no stage, no activations) is no stage.
    EXPECT_TRUE(model.stageCosts(c, {StageLayout{}}).ok());
    auto accepted = model.stageCosts(c, evenLayout(12, 4));
    ASSERT_TRUE(accepted.ok()) << accepted.error().message;
    EXPECT_DOUBLE_EQ((*accepted)[0].activation_bytes, 300);
}

// Per instruction against published measurements on an A100-80G (tests/bench/published_runs.py
// has every row): the bundled preset's F, B (input gradient) and W of one stage or block within
// 10% of what the papers profiled.
Config a100Gpt(int hidden, int heads, int sequence, int microBatch, int tp) {
    Config c = presetConfig("gpt3-13b", "a100-80g", 1, 1, tp);
    c.model.hidden = hidden;
    c.model.heads = c.model.kv_heads = heads;
    c.model.ffn_hidden = 4 * hidden;
    c.model.sequence_length = sequence;
    c.parallel.micro_batch_size = microBatch;
    c.training.attention = TrainingConfig::Attention::Materialized;
    return c;
}

TEST(CostModel, UnfusedRmsNormsKeepTheirWideInput) {
    // The eager path normalises a LLaMA block's two RMSNorms as mario-executor does: the input
    // upcast to float64 (8 bytes an element) and the bf16 normalised product (2) stay until the
    // backward, 2 × 10 bytes per token and hidden unit beyond what the materialised path keeps.
    Config c = tinyGpt();
    c.model.gated_mlp = true;
    c.training.attention = TrainingConfig::Attention::Materialized;
    const StageLayout twoBlocks{1, 3, false, false};
    const double materialized = (*computeStageCosts(c, {twoBlocks}))[0].activation_bytes;
    c.training.attention = TrainingConfig::Attention::Eager;
    const double eager = (*computeStageCosts(c, {twoBlocks}))[0].activation_bytes;
    const double tokens = 2 * 128, hidden = 64;
    EXPECT_DOUBLE_EQ(eager - materialized, 2 * 2 * 10 * tokens * hidden);
}

TEST(CostModel, InstructionsMatchZeroBubblesProfiledStage) {
    // Qi et al., ICLR'24, Table 6: a middle stage of their 14.6B GPT (3 blocks of hidden 5120,
    // 40 heads, sequence 1024, micro-batch 1, tp 1, pp 16; fp16 Megatron with dropout, no
    // FlashAttention): T_F 11.347 ms, T_B 11.248 ms, T_W 8.132 ms (m = 48).
    Config c = a100Gpt(5120, 40, 1024, 1, 1);
    c.training.sequence_parallel = false;
    const StageCost stage = (*computeStageCosts(c, {StageLayout{10, 13, false, false}}))[0];
    EXPECT_NEAR(stage.forward_ms / 11.347, 1, 0.10);
    EXPECT_NEAR(*stage.backward_input_ms / 11.248, 1, 0.10);
    EXPECT_NEAR(*stage.backward_weight_ms / 8.132, 1, 0.10);
}

TEST(CostModel, OneLayerMatchesKorthikantisTable4) {
    // Korthikanti et al. 2022, Table 4: one layer of their 22B GPT (hidden 6144, 64 heads,
    // sequence 2048, micro-batch 4, tp 8) with sequence parallelism and selective
    // recomputation: forward 7.2 ms, backward 13.1 ms.
    Config c = a100Gpt(6144, 64, 2048, 4, 8);
    c.training.recompute = TrainingConfig::Recompute::Selective;
    const StageCost layer = (*computeStageCosts(c, {StageLayout{0, 1, false, false}}))[0];
    EXPECT_NEAR(layer.forward_ms / 7.2, 1, 0.10);
    EXPECT_NEAR(layer.backward_ms / 13.1, 1, 0.10);
}


// The end stages' own kernels, counted by hand from Megatron-LM's source on an accelerator whose
// element-wise kernels stream 1e6 bytes a millisecond and everything else is free. The head: the
// final norm (read, write: 4 bytes an element of T·h) and the vocabulary-parallel cross-entropy
// (megatron/mpu/cross_entropy.py: `.float()` of the logits 2 + 4, max 4, in-place subtract 4 + 4,
// in-place exp 4 + 4, sum 4, in-place divide 4 + 4: 38 bytes a logit); its backward the norm's
// 6 and the in-place multiply 4 + 4 and the cast back 4 + 2: 14 a logit. The embedding: GPT's
// embedding dropout (read, write, a byte mask: 5 an element of T·h), its mask applied backward
// (5); its layout copy [b, s, h] -> [s, b, h] (2 + 2) streams at the HBM rate, there for b > 1.
TEST(CostModel, EndStagesAddEmbeddingAndHeadKernelsCountedByHand) {
    Config c = tinyGpt();  // T = b·s = 256 tokens, h = 64, V = 1000, dropout (GPT-style)
    c.hardware.peak_tflops = 1e9;
    c.hardware.hbm_gb_per_s = 1e12;
    c.hardware.elementwise_gb_per_s = 1;
    const double Th = 256 * 64, logits = 256 * 1000.0;
    auto extra = [&](const Config& config, StageLayout with, StageLayout without) {
        auto a = computeStageCosts(config, {with}), b = computeStageCosts(config, {without});
        EXPECT_TRUE(a.ok() && b.ok());
        return std::array<double, 3>{(*a)[0].forward_ms - (*b)[0].forward_ms,
                                     *(*a)[0].backward_input_ms - *(*b)[0].backward_input_ms,
                                     *(*a)[0].backward_weight_ms - *(*b)[0].backward_weight_ms};
    };
    const auto head = extra(c, {3, 4, false, true}, {3, 4, false, false});
    EXPECT_NEAR(head[0], (4 * Th + 38 * logits) / 1e6, 1e-6);
    EXPECT_NEAR(head[1], (6 * Th + 14 * logits) / 1e6, 1e-6);
    const auto embedding = extra(c, {0, 1, true, false}, {0, 1, false, false});
    EXPECT_NEAR(embedding[0], 5 * Th / 1e6, 1e-6);
    EXPECT_NEAR(embedding[1], 5 * Th / 1e6, 1e-6);
    // The layout copy at the HBM rate (1e6 bytes a millisecond, element-wise kernels free): the
    // gather reads a row and a position and writes their sum (3 · 2), the copy 2 + 2 forward;
    // the scatter reads and writes fp32 (2 · 4) and the gradient's copy 2 + 2, a weight gradient.
    // Beside them the whole table's dense gradient, whatever the tokens: a bf16 zero fill (2 a
    // parameter) and its addition into the fp32 main gradient (read 2 + 4, write 4), 12 bytes for
    // each of V·h = 1000 · 64 parameters.
    Config copies = c;
    copies.hardware.hbm_gb_per_s = 1;
    copies.hardware.elementwise_gb_per_s = 1e12;
    const double table = 1000 * 64;
    const auto twoSamples = extra(copies, {0, 1, true, false}, {0, 1, false, false});
    EXPECT_NEAR(twoSamples[0], (6 + 4) * Th / 1e6, 1e-6);
    EXPECT_NEAR(twoSamples[2], ((8 + 4) * Th + 12 * table) / 1e6, 1e-6);
    copies.parallel.micro_batch_size = 1;  // [1, s, h] transposed is already contiguous: no copy
    const auto oneSample = extra(copies, {0, 1, true, false}, {0, 1, false, false});
    EXPECT_NEAR(oneSample[0], 6 * Th / 2 / 1e6, 1e-6);
    EXPECT_NEAR(oneSample[2], (8 * Th / 2 + 12 * table) / 1e6, 1e-6);
    // At tp 2 each rank holds half the table; a bf16 gradient buffer adds 2 + 2 + 2; torchtitan's
    // FSDP has no main gradient to add into, only the fill.
    Config split = copies;
    split.parallel.tp = 2;
    split.training.sequence_parallel = false;
    const auto halfTable = extra(split, {0, 1, true, false}, {0, 1, false, false});
    EXPECT_NEAR(halfTable[2], (8 * Th / 2 + 12 * table / 2) / 1e6, 1e-6);
    Config bf16 = copies;
    bf16.training.grad_reduce_in_bf16 = true;
    EXPECT_NEAR(extra(bf16, {0, 1, true, false}, {0, 1, false, false})[2], (8 * Th / 2 + 8 * table) / 1e6, 1e-6);
    Config titan = copies;
    titan.training.framework = TrainingConfig::Framework::Torchtitan;
    EXPECT_NEAR(extra(titan, {0, 1, true, false}, {0, 1, false, false})[2], (8 * Th / 2 + 2 * table) / 1e6, 1e-6);
}

}  // namespace
}  // namespace mario
