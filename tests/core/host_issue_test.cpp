// Host time (docs/cost-model.md#host-time): an instruction lasts the longer of its GPU time and
// the host's issue time of its operators; DeepSpeed's pipeline engine holds the sender's stream
// for a whole blocking send. Every expected value is worked by hand on the tiny GPT of
// CostTestConfigs.h, whose kernels take well under a microsecond each.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/cost/Collectives.h"
#include "core/cost/HostIssue.h"
#include "core/io/TrainingJson.h"
#include "core/session/PlanBuilder.h"
#include "tests/core/CostTestConfigs.h"

namespace mario {
namespace {

using testing::presetConfig;
using testing::tinyGpt;

StageCost stageOf(const Config& c, StageLayout layout) {
    auto costs = computeStageCosts(c, {layout});
    EXPECT_TRUE(costs.ok()) << (costs.ok() ? "" : costs.error().message);
    return costs.ok() ? (*costs)[0] : StageCost{};
}

constexpr StageLayout kTwoMiddleBlocks{0, 2, false, false};

TEST(HostIssue, BlockOperatorsCountedByHand) {
    // A GPT block with FlashAttention and dropout, tp 1. Forward: input norm, QKV GEMM, flash
    // attention, projection GEMM, bias-dropout-residual, norm, MLP up GEMM, GeLU, MLP down GEMM,
    // bias-dropout-residual = 10. Input gradient: the four GEMMs' data gradients, two norms,
    // flash backward, GeLU backward, and per residual the mask backward and the gradient sum
    // (2 × 2) = 12. Weight gradient: four GEMMs.
    Config c = tinyGpt();
    const KernelTimes n = HostIssue(c).launches(kTwoMiddleBlocks);
    EXPECT_EQ(n.forward_ms, 2 * 10);
    EXPECT_EQ(n.input_grad_ms, 2 * 12);
    EXPECT_EQ(n.weight_grad_ms, 2 * 4);
    // Tensor parallelism adds four collectives a block and direction (not to W).
    c.parallel.tp = 2;
    const KernelTimes tp = HostIssue(c).launches(kTwoMiddleBlocks);
    EXPECT_EQ(tp.forward_ms, 2 * (10 + 4));
    EXPECT_EQ(tp.input_grad_ms, 2 * (12 + 4));
    EXPECT_EQ(tp.weight_grad_ms, 2 * 4);
}

TEST(HostIssue, TinyKernelsAreHostBound) {
    // 10 us a host operator against kernels of a fraction of a microsecond: each instruction is
    // its operators × 10 us. F: 20 × 0.01 ms; I: 24 × 0.01; W: 8 × 0.01; B issues both halves.
    Config c = tinyGpt();
    c.training.host_op_us = 10;
    const StageCost s = stageOf(c, kTwoMiddleBlocks);
    EXPECT_NEAR(s.forward_ms, 0.20, 1e-12);
    EXPECT_NEAR(s.inputGradMs(), 0.24, 1e-12);
    EXPECT_NEAR(s.weightGradMs(), 0.08, 1e-12);
    EXPECT_NEAR(s.backward_ms, 0.32, 1e-12);
    EXPECT_NEAR(s.recompute_ms, 0.20, 1e-12);
    // The GPU's own time is far below: with a free host the stage is over 50× shorter.
    c.training.host_op_us = 0;
    EXPECT_LT(stageOf(c, kTwoMiddleBlocks).forward_ms, 0.20 / 50);
    // CUDA graphs: one launch per instruction, 0.01 ms each.
    c.training.host_op_us = 10;
    c.training.cuda_graphs = true;
    const StageCost graphs = stageOf(c, kTwoMiddleBlocks);
    EXPECT_NEAR(graphs.forward_ms, 0.01, 1e-12);
    EXPECT_NEAR(graphs.weightGradMs(), 0.01, 1e-12);
    EXPECT_NEAR(graphs.backward_ms, 0.02, 1e-12);
}

TEST(HostIssue, LargeKernelsStayGpuBound) {
    // GPT-3 13B on an A100: 40 blocks over 4 stages, each kernel far above 10 us; the default
    // framework's host never paces it, so its times equal those of a free host.
    Config c = presetConfig("gpt3-13b", "a100-40g", 4);
    const StageLayout middle{10, 20, false, false};
    const StageCost megatron = stageOf(c, middle);
    c.training.host_op_us = 0;
    const StageCost freeHost = stageOf(c, middle);
    EXPECT_DOUBLE_EQ(megatron.forward_ms, freeHost.forward_ms);
    EXPECT_DOUBLE_EQ(megatron.backward_ms, freeHost.backward_ms);
    EXPECT_DOUBLE_EQ(megatron.weightGradMs(), freeHost.weightGradMs());
    // And the host time is indeed below: 10 blocks × 10 operators × 10 us = 1 ms of ~100.
    EXPECT_LT(HostIssue::operatorMicroseconds(TrainingConfig{}) * 1e-3 * 100, megatron.forward_ms);
}

TEST(HostIssue, DeepSpeedSendsWholeAndBlocking) {
    // pp 2 on one node (100 GB/s, 0.01 ms a message), tp 2: the boundary is 2·s·b·h =
    // 2·128·2·64 = 32768 bytes; Megatron sends 1/tp of it per rank and beside compute,
    // DeepSpeed all of it on the compute stream: 0.01 + 32768 / 1e8 ms on the sender.
    Config c = tinyGpt();
    c.parallel.tp = 2;
    c.training.host_op_us = 0;
    const StageLayout first{0, 2, true, false}, last{2, 4, false, true};
    const StageCost mFirst = stageOf(c, first), mLast = stageOf(c, last);
    c.training.framework = TrainingConfig::Framework::DeepSpeed;
    const StageCost dFirst = stageOf(c, first), dLast = stageOf(c, last);
    const double transfer = 0.01 + 32768 / 1e8;
    EXPECT_DOUBLE_EQ(mFirst.send_bytes, 16384);
    EXPECT_DOUBLE_EQ(dFirst.send_bytes, 32768);
    EXPECT_NEAR(dFirst.forward_ms - mFirst.forward_ms, transfer, 1e-12);
    EXPECT_DOUBLE_EQ(dFirst.backward_ms, mFirst.backward_ms);  // the first stage sends no gradient
    EXPECT_DOUBLE_EQ(dLast.forward_ms, mLast.forward_ms);      // the last sends no activation
    EXPECT_NEAR(dLast.backward_ms - mLast.backward_ms, transfer, 1e-12);
    EXPECT_NEAR(dLast.inputGradMs() - mLast.inputGradMs(), transfer, 1e-12);
}

TEST(HostIssue, OneFOneBWaitsForItsSends) {
    // pp 2 on one node (100 GB/s, 0.01 ms a message), tp 2 with sequence parallelism: each rank
    // sends its 16384 bytes (1/tp of 2·s·b·h = 32768) and Megatron's _communicate waits for it
    // before the next instruction: the sender's F (first stage) and B and I (last stage) grow by
    // 0.01 + 16384 / 1e8 ms. Receiving adds nothing: each rank keeps its own sequence slice.
    Config c = tinyGpt();
    c.parallel.tp = 2;
    const StageLayout first{0, 2, true, false}, last{2, 4, false, true};
    const StageCost aFirst = stageOf(c, first), aLast = stageOf(c, last);  // overlapped
    c.training.overlap_p2p_comm.reset();                                     // Megatron's 1F1B
    const StageCost mFirst = stageOf(c, first), mLast = stageOf(c, last);
    const double transfer = 0.01 + 16384 / 1e8;
    EXPECT_NEAR(mFirst.forward_ms - aFirst.forward_ms, transfer, 1e-12);
    EXPECT_DOUBLE_EQ(mFirst.backward_ms, aFirst.backward_ms);
    EXPECT_DOUBLE_EQ(mLast.forward_ms, aLast.forward_ms);
    EXPECT_NEAR(mLast.backward_ms - aLast.backward_ms, transfer, 1e-12);
    EXPECT_NEAR(mLast.inputGradMs() - aLast.inputGradMs(), transfer, 1e-12);
    EXPECT_DOUBLE_EQ(mFirst.recompute_ms, aFirst.recompute_ms);  // R sends nothing
    // Megatron's interleaved schedule overlaps its sends by default (--overlap-p2p-communication),
    // and the other schemes run with sends beside compute, as the execution model runs them.
    c.parallel.scheme = Scheme::Interleaved;
    c.parallel.chunks = 2;
    EXPECT_DOUBLE_EQ(stageOf(c, first).forward_ms, aFirst.forward_ms);
    c.training.overlap_p2p_comm = false;  // as the 2021-2022 code ran it
    EXPECT_NEAR(stageOf(c, first).forward_ms - aFirst.forward_ms, transfer, 1e-12);
    c.training.overlap_p2p_comm.reset();
    c.parallel.scheme = Scheme::Chimera;
    c.parallel.chunks = 1;
    EXPECT_DOUBLE_EQ(stageOf(c, first).forward_ms, aFirst.forward_ms);
    // PyTorch's Schedule1F1B (torchtitan) waits on each fused send and receive.
    c.training.framework = TrainingConfig::Framework::Torchtitan;
    c.training.host_op_us = 0;
    c.parallel.scheme = Scheme::OneFOneB;
    EXPECT_NEAR(stageOf(c, first).forward_ms - aFirst.forward_ms, transfer, 1e-12);
}

TEST(HostIssue, ScatterGatheredBoundariesAreGatheredBeforeUse) {
    // Without sequence parallelism every rank holds the whole boundary but sends 1/tp of it;
    // the receiver all-gathers the 32768 bytes over its 2 ranks before use: its F (last stage)
    // and its B and I (first stage, receiving the gradient) grow by that all-gather, priced by
    // NCCL's model of Collectives (ring, one NVLink hop, 100 GB/s).
    Config c = tinyGpt();
    c.parallel.tp = 2;
    // Kernels free (their token counts differ with sequence parallelism), so that a stage's
    // times are its collectives: two all-reduces a block and direction either way, which move
    // the bytes of the all-gathers and reduce-scatters sequence parallelism runs instead.
    c.hardware.peak_tflops = 1e12;
    c.hardware.hbm_gb_per_s = c.hardware.elementwise_gb_per_s = 1e15;
    c.training.dropout = false;
    const StageLayout first{0, 2, true, false}, last{2, 4, false, true};
    const StageCost sFirst = stageOf(c, first), sLast = stageOf(c, last);
    c.training.sequence_parallel = false;
    const StageCost gFirst = stageOf(c, first), gLast = stageOf(c, last);
    const Collectives nccl(c.hardware);
    const double gather = nccl.allGatherMs(32768, {2, 1, nccl.busBytesPerMs(true, 1)});
    ASSERT_GT(gather, 1e-3);
    EXPECT_NEAR(gLast.forward_ms - sLast.forward_ms, gather, 1e-9);
    EXPECT_NEAR(gFirst.inputGradMs() - sFirst.inputGradMs(), gather, 1e-9);
    EXPECT_NEAR(gFirst.forward_ms, sFirst.forward_ms, 1e-9);  // the first stage receives no activation
    EXPECT_NEAR(gLast.inputGradMs(), sLast.inputGradMs(), 1e-9);  // the last no gradient
}

TEST(HostIssue, FrameworkKeysReadAndRefused) {
    auto read = readTraining(nlohmann::json::parse(R"({"framework": "deepspeed", "cuda_graphs": true, "host_op_us": 7,
                                                             "overlap_p2p_comm": false})"));
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(read->framework, TrainingConfig::Framework::DeepSpeed);
    EXPECT_TRUE(read->cuda_graphs);
    EXPECT_EQ(read->host_op_us, 7.0);
    EXPECT_EQ(read->overlap_p2p_comm, false);
    auto back = readTraining(writeTraining(*read));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, *read);
    auto bad = readTraining(nlohmann::json::parse(R"({"framework": "jax"})"));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("training.framework"), std::string::npos) << bad.error().message;
    EXPECT_EQ(bad.error().message.find('\n'), std::string::npos);
    auto negative = readTraining(nlohmann::json::parse(R"({"host_op_us": -1})"));
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.error().message.find("training.host_op_us"), std::string::npos) << negative.error().message;
    auto word = readTraining(nlohmann::json::parse(R"({"overlap_p2p_comm": "yes"})"));
    ASSERT_FALSE(word.ok());
    EXPECT_NE(word.error().message.find("training.overlap_p2p_comm"), std::string::npos) << word.error().message;
    // Configs without the keys write none of them (default framework, no graphs, the scheme's
    // own send overlap), so that older configs read back byte for byte.
    const nlohmann::json plain = writeTraining(TrainingConfig{});
    EXPECT_FALSE(plain.contains("framework"));
    EXPECT_FALSE(plain.contains("cuda_graphs"));
    EXPECT_FALSE(plain.contains("overlap_p2p_comm"));
}

}  // namespace
}  // namespace mario
