// PyTorch pipelining CSVs imported as plans: PyTorch's own files (rows copied from its
// schedules, idle slots as empty cells) with their inferred placement, order errors that point
// at the offending cell, and the round trip for generated plans.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/io/PipeliningValidation.h"
#include "tests/core/PipeliningCsvFixtures.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using namespace csvtest;

// ---- PyTorch's own files ------------------------------------------------------------------------

struct PyTorchFile {
    const char* name;
    const char* text;
    std::vector<int> stageRank;  // known from the schedule's placement (loop or v)
    int microbatches;
    int overlapCells = 0;
    int fsdpActions = 0;
    int communicationCells = 0;
    int gradientCells = 0;
    std::optional<Scheme> sameAsMario = std::nullopt;  // Mario's generator gives the same order
    int chunks = 1;
};

const std::vector<int> kLoopedP4V2{0, 1, 2, 3, 0, 1, 2, 3};
const std::vector<int> kVP2{0, 1, 1, 0};
const std::vector<int> kVP4{0, 1, 2, 3, 3, 2, 1, 0};

class PyTorchFiles : public ::testing::TestWithParam<PyTorchFile> {};

TEST_P(PyTorchFiles, ImportInfersThePlacementAndRuns) {
    const PyTorchFile& file = GetParam();
    const PipeliningCsv csv = parsed(file.text);
    EXPECT_EQ(csv.overlap_cells, file.overlapCells);
    EXPECT_EQ(csv.count(Kind::Unshard) + csv.count(Kind::Reshard), file.fsdpActions);
    EXPECT_EQ(csv.count(Kind::Communication), file.communicationCells);
    EXPECT_EQ(csv.count(Kind::Gradient), file.gradientCells);
    auto ranks = inferStageRanks(csv);
    ASSERT_TRUE(ranks.ok()) << ranks.error().message;
    EXPECT_EQ(*ranks, file.stageRank);

    const auto plan = imported(file.text);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(stageDevices(plan->plan), file.stageRank);
    EXPECT_EQ(plan->plan.devices.size(), csv.ranks.size());
    EXPECT_EQ(plan->plan.microbatchCount(), file.microbatches);
    EXPECT_EQ(plan->plan.info.scheme, "imported");
    EXPECT_EQ(computeOrderOf(plan->plan), csv.computeOrder());
    const double makespan = runsCleanly(plan->plan);

    EXPECT_TRUE(hasNoteStartingWith(*plan, "unit costs: "));
    int pairs = 0;  // every OVERLAP_F_B cell of these files is one forward and one backward
    for (const auto& device : plan->plan.devices)
        for (const auto& ins : device.program) pairs += ins.overlapped;
    EXPECT_EQ(pairs, file.overlapCells);
    if (file.fsdpActions > 0) {
        EXPECT_TRUE(hasNoteStartingWith(*plan, std::to_string(file.fsdpActions) + " UNSHARD/RESHARD actions dropped"));
    }
    if (file.communicationCells > 0) {
        EXPECT_TRUE(hasNoteStartingWith(*plan, std::to_string(file.communicationCells) + " communication cells"));
    }
    if (file.gradientCells > 0) {
        EXPECT_TRUE(hasNoteStartingWith(*plan, std::to_string(file.gradientCells) + " REDUCE_GRAD cells dropped"));
    }
    EXPECT_EQ(plan->notes.size(),
              1u + (file.fsdpActions > 0) + (file.communicationCells > 0) + (file.gradientCells > 0));

    if (file.sameAsMario) {
        // Mario's generator follows PyTorch's algorithm, and its unit plan has the same costs.
        const Plan mario =
            test::unitPlan(*file.sameAsMario, static_cast<int>(csv.ranks.size()), file.microbatches, file.chunks);
        EXPECT_EQ(computeOrderOf(mario), csv.computeOrder());
        EXPECT_EQ(stageDevices(mario), file.stageRank);
        EXPECT_DOUBLE_EQ(makespan, Simulator::run(mario)->makespan_ms);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, PyTorchFiles,
    ::testing::Values(PyTorchFile{"LoopedBfs", kLoopedBfsP4V2M8, kLoopedP4V2, 8, 0, 0, 0, 0, Scheme::LoopedBfs, 2},
                      PyTorchFile{"Interleaved1F1B", kInterleaved1F1BP4V2M8, kLoopedP4V2, 8},
                      PyTorchFile{"InterleavedZeroBubble", kInterleavedZbP4V2M8, kLoopedP4V2, 8, 0, 0, 0, 0,
                                  Scheme::InterleavedZb, 2},
                      PyTorchFile{"InterleavedZeroBubbleWithBubbles", kInterleavedZbP4V2M2, kLoopedP4V2, 2},
                      PyTorchFile{"ZbvP2", kZbvP2M4, kVP2, 4},
                      PyTorchFile{"ZbvP4", kZbvP4M8, kVP4, 8, 0, 0, 0, 0, Scheme::Zbv},
                      // Step 4 and 5 of DualPipeV give rank r 2(r+1) + (P-r-1) overlapped cells, one fewer on
                      // the last rank: 3 + 3 on two ranks, 5 + 6 + 7 + 7 on four.
                      PyTorchFile{"DualPipeVP2", kDualPipeVP2M4, kVP2, 4, 6},
                      PyTorchFile{"DualPipeVP4", kDualPipeVP4M8, kVP4, 8, 25, 0, 0, 0, Scheme::DualPipeV},
                      // Lowered files: UNSHARD and RESHARD for each of a rank's two stages; SEND and RECV in both
                      // directions over every boundary between ranks (3 boundaries looped, 2 in the V) for 4
                      // micro-batches; one REDUCE_GRAD per stage.
                      PyTorchFile{"LoweredInterleaved1F1B", kLoweredInterleaved1F1BP2, {0, 1, 0, 1}, 4, 0, 8, 48, 4},
                      PyTorchFile{"LoweredDualPipeV", kLoweredDualPipeVP2, kVP2, 4, 6, 8, 32, 4}),
    [](const ::testing::TestParamInfo<PyTorchFile>& info) { return std::string(info.param.name); });

TEST(PyTorchFiles, LoweredFileKeepsTheComputeOrder) {
    // The compute order PyTorch lowered into kLoweredInterleaved1F1BP2 (§5.4 of its trace).
    const PipeliningCsv csv = parsed(kLoweredInterleaved1F1BP2);
    EXPECT_EQ(csv.computeOrder()[0], actions({"0F0", "0F1", "2F0", "2F1", "0F2", "2B0", "0F3", "2B1", "2F2", "0B0",
                                              "2F3", "0B1", "2B2", "2B3", "0B2", "0B3"}));
}

TEST(PyTorchFiles, ZbvP2StartsRankOneWithAnIdleSlot) {
    const PipeliningCsv csv = parsed(kZbvP2M4);
    ASSERT_EQ(csv.ranks.size(), 2u);
    EXPECT_EQ(csv.ranks[1].front().text(), "1F0");
    EXPECT_EQ(csv.ranks[1].front().column, 2);
}

// PyTorch 2.15 retires every send and reduction with a wait cell: 16 WAIT_SEND_F (one per
// forward send), 8 WAIT_SEND_B and 4 WAIT_REDUCE_GRAD. They are read, named and dropped, and
// the order is the one the 2.11 file of the same schedule gives.
TEST(PyTorchFiles, Torch215WaitsAreReadAndDropped) {
    const PipeliningCsv csv = parsed(kLoweredInterleaved1F1BP2Torch215);
    EXPECT_EQ(csv.count(Kind::Wait), 28);
    EXPECT_EQ(csv.ranks[1].back().text(), "1WAIT_SEND_B3");
    const auto plan = imported(kLoweredInterleaved1F1BP2Torch215);
    ASSERT_TRUE(plan.has_value());
    EXPECT_NE(std::find(plan->notes.begin(), plan->notes.end(),
                        "28 wait cells (WAIT_SEND_F, WAIT_SEND_B, WAIT_REDUCE_GRAD) dropped: Mario's sends and "
                        "reductions need no separate wait"),
              plan->notes.end());
    const auto older = imported(kLoweredInterleaved1F1BP2);
    ASSERT_TRUE(older.has_value());
    EXPECT_EQ(computeOrderOf(plan->plan), computeOrderOf(older->plan));
}

TEST(PyTorchFiles, MalformedWaitsAreNamed) {
    auto csv = parsePipeliningCsv("0F0,0WAIT_SEND_X0\n");
    ASSERT_FALSE(csv.ok());
    EXPECT_NE(csv.error().message.find("\"0WAIT_SEND_X0\" is not a wait PyTorch writes"), std::string::npos)
        << csv.error().message;
    EXPECT_FALSE(parsePipeliningCsv("0F0,0WAIT_SEND_F\n").ok());  // no micro-batch
}

// ---- order errors -------------------------------------------------------------------------------

TEST(PipeliningImportErrors, BackwardWithoutForward) {
    EXPECT_EQ(importError("0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n"
                          "1F0,1B0,1F1,1B1,1F2,1B2,None,,1B3\n"),
              "line 2: stage 1 micro-batch 3 has a backward (column 9, 1B3) but no forward");
}

TEST(PipeliningImportErrors, InputGradientWithoutForward) {
    EXPECT_EQ(importError("0F0,0I0,0W0,0I1,0W1\n"),
              "line 1: stage 0 micro-batch 1 has a backward (column 4, 0I1) but no forward");
}

TEST(PipeliningImportErrors, SameActionTwice) {
    EXPECT_EQ(importError("0F0,0F1,0F0,0B0,0B1\n1F0,1B0,1F1,1B1\n"), "line 1: 0F0 appears twice (columns 1 and 3)");
}

TEST(PipeliningImportErrors, SameActionTwiceInsideAnOverlap) {
    EXPECT_EQ(importError("0F0,0F1,(0F1;0B0)OVERLAP_F_B,0B1\n"), "line 1: 0F1 appears twice (columns 2 and 3)");
}

TEST(PipeliningImportErrors, BackwardBeforeItsForward) {
    EXPECT_EQ(importError("0F0,0B0,0F1,0B1\n1F0,1B1,1B0,1F1\n"),
              "line 2, column 2: 1B1 comes before 1F1 (column 4), its forward");
}

TEST(PipeliningImportErrors, InputGradientBeforeItsForward) {
    EXPECT_EQ(importError("0I0,0F0,0W0\n"), "line 1, column 1: 0I0 comes before 0F0 (column 2), its forward");
}

TEST(PipeliningImportErrors, WeightGradientBeforeItsInputGradient) {
    EXPECT_EQ(importError("0F0,0W0,0I0\n"), "line 1, column 2: 0W0 comes before 0I0 (column 3), its I");
}

TEST(PipeliningImportErrors, WeightGradientWithoutInputGradient) {
    EXPECT_EQ(importError("0F0,0W0,0B0\n"), "line 1: stage 0 micro-batch 0 has a W (column 2, 0W0) but no I");
}

TEST(PipeliningImportErrors, WeightGradientAfterAFullBackward) {
    EXPECT_EQ(importError("0F0,,0B0,0W0\n"),
              "line 1, column 4: 0W0 follows the full backward 0B0 (column 3), which already computed the weight "
              "gradient; W goes with I");
}

TEST(PipeliningImportErrors, InputGradientWithoutWeightGradient) {
    EXPECT_EQ(importError("0F0,0I0\n"), "line 1: stage 0 micro-batch 0 has an I (column 2, 0I0) but no W");
}

TEST(PipeliningImportErrors, FullAndSplitBackward) {
    EXPECT_EQ(importError("0F0,0B0,0I0,0W0\n"),
              "line 1: stage 0 micro-batch 0 has a full backward (column 2, 0B0) and an I (column 3, 0I0)");
}

TEST(PipeliningImportErrors, ForwardWithoutBackward) {
    EXPECT_EQ(importError("0F0,0F1,0B0\n"),
              "line 1: stage 0 micro-batch 1 has a forward (column 2, 0F1) but no backward");
}

TEST(PipeliningImportErrors, RecomputeOutsideItsForwardAndBackward) {
    EXPECT_EQ(importError("0R0,0F0,0B0\n"), "line 1, column 1: 0R0 recomputes 0F0, which has not run");
    EXPECT_EQ(importError("0F0,0B0,0R0\n"), "line 1, column 2: 0B0 comes before 0R0 (column 3)");
}

TEST(PipeliningImportErrors, StagesRunDifferentMicroBatches) {
    EXPECT_EQ(importError("0F0,0F1,0B0,0B1\n1F0,1B0\n"),
              "stage 1 (line 2) has no forward for micro-batch 1, which stage 0 (line 1) runs");
    EXPECT_EQ(importError("0F0,0B0\n1F0,1F1,1B0,1B1\n"),
              "stage 0 (line 1) has no forward for micro-batch 1, which stage 1 (line 2) runs");
}

TEST(PipeliningImportErrors, MicroBatchesSkipANumber) {
    EXPECT_EQ(
        importError("0F0,0F2,0B0,0B2\n1F0,1F2,1B0,1B2\n"),
        "no stage runs micro-batch 1 forward, but stage 0 (line 1) runs micro-batch 2; micro-batches are numbered "
        "0..M-1");
}

TEST(PipeliningImportErrors, NoComputations) {
    EXPECT_EQ(importError("0UNSHARD,0SEND_F0,0RESHARD\n"), "the file holds no computations (F, B, I or W)");
}

TEST(PipeliningImportErrors, StageOnTwoRanks) {
    EXPECT_EQ(importError("0F0,0B0\n1F0,1B0,0F1\n"),
              "line 2, column 3: 0F1 puts stage 0 on rank 1, but line 1, column 1 (0F0) put it on rank 0; a stage "
              "runs on one rank");
    // Communication and FSDP cells place stages too, as in PyTorch.
    EXPECT_EQ(importError("0F0,0B0,1UNSHARD\n1F0,1B0\n"),
              "line 2, column 1: 1F0 puts stage 1 on rank 1, but line 1, column 3 (1UNSHARD) put it on rank 0; a stage "
              "runs on one rank");
}

TEST(PipeliningImportErrors, MissingStage) {
    EXPECT_EQ(importError("0F0,0B0\n2F0,2B0\n"),
              "no action names stage 1, but line 2, column 1 (2F0) names stage 2; stages are numbered 0..S-1");
}

// ---- with a config's stages -----------------------------------------------------------------------

TEST(PipeliningImportWithConfig, TakesTheConfigsStagesAndCosts) {
    test::UnitStage unit;
    unit.forward = 3;
    unit.backward = 5;
    Plan skeleton = test::unitPlan(Scheme::Zbv, 2, 4, 1, unit);
    auto plan = importPipeliningCsv(parsed(kZbvP2M4), skeleton, "zbv.config.json");
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_DOUBLE_EQ(plan->plan.stages[2].cost.forward_ms, 3);
    EXPECT_TRUE(plan->notes.empty());
    EXPECT_EQ(computeOrderOf(plan->plan), computeOrderOf(skeleton));
    runsCleanly(plan->plan);
}

TEST(PipeliningImportWithConfig, RefusesAnotherPlacement) {
    // Interleaved on two ranks puts stage 2 on rank 0; ZBV's V puts it on rank 1.
    auto plan = importPipeliningCsv(parsed(kZbvP2M4), test::unitPlan(Scheme::Interleaved, 2, 4, 2), "w.config.json");
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().message, "stage 2: the CSV puts it on rank 1 (line 2), w.config.json on device 0");
}

TEST(PipeliningImportWithConfig, RefusesOtherSizes) {
    auto ranks = importPipeliningCsv(parsed(kZbvP2M4), test::unitPlan(Scheme::OneFOneB, 4, 4), "v.config.json");
    ASSERT_FALSE(ranks.ok());
    EXPECT_EQ(ranks.error().message, "2 ranks (lines), but v.config.json has 4 devices");
    auto stages = importPipeliningCsv(parsed(kZbvP2M4), test::unitPlan(Scheme::OneFOneB, 2, 4), "v.config.json");
    ASSERT_FALSE(stages.ok());
    EXPECT_EQ(stages.error().message, "4 stages, but v.config.json has 2");
    // PyTorch refuses a CSV whose micro-batch count is not the schedule's: so does import.
    auto microbatches = importPipeliningCsv(parsed(kZbvP2M4), test::unitPlan(Scheme::Zbv, 2, 8), "v.config.json");
    ASSERT_FALSE(microbatches.ok());
    EXPECT_EQ(microbatches.error().message,
              "the CSV runs 4 micro-batches, v.config.json 8 (PyTorch refuses the pair too)");
}

// ---- round trip ---------------------------------------------------------------------------------

struct Generated {
    Scheme scheme;
    int chunks;
};

class PipeliningRoundTrip : public ::testing::TestWithParam<Generated> {};

TEST_P(PipeliningRoundTrip, ExportThenImportGivesTheSameOrder) {
    const Generated& g = GetParam();
    const ScheduleShape shape{g.scheme, 4, g.chunks, 8};
    auto order = generateComputeOrder(shape);
    ASSERT_TRUE(order.ok()) << order.error().message;
    const Plan plan = test::unitPlan(g.scheme, 4, 8, g.chunks);
    const double makespan = runsCleanly(plan);
    for (auto format : {PipeliningCsvFormat::ComputeOnly, PipeliningCsvFormat::ComputeComms}) {
        SCOPED_TRACE(format == PipeliningCsvFormat::ComputeOnly ? "compute_only" : "compute_comms");
        const std::string csv = exported(plan, {.format = format});
        const auto back = imported(csv);
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(computeOrderOf(back->plan), *order);
        EXPECT_EQ(stageDevices(back->plan), stageDevices(plan));
        // The import's unit costs are the test plans' (F 1, B 2, I = W = 1).
        EXPECT_DOUBLE_EQ(runsCleanly(back->plan), makespan);
    }
}

INSTANTIATE_TEST_SUITE_P(Schemes, PipeliningRoundTrip,
                         ::testing::Values(Generated{Scheme::OneFOneB, 1}, Generated{Scheme::Interleaved, 2},
                                           Generated{Scheme::ZbH1, 1}, Generated{Scheme::Zbv, 1},
                                           Generated{Scheme::DualPipeV, 1}, Generated{Scheme::LoopedBfs, 2}),
                         [](const ::testing::TestParamInfo<Generated>& info) {
                             std::string name(schemeName(info.param.scheme));
                             std::erase(name, '-');
                             return name == "1f1b" ? std::string("OneFOneB") : name;
                         });

// ---- files ----------------------------------------------------------------------------------------

TEST(PipeliningCsvFiles, WritesAndReadsFiles) {
    const Plan plan = handMadePlan();
    const auto path =
        std::filesystem::temp_directory_path() / ("mario_pipelining_csv_test_" + std::to_string(::getpid()) + ".csv");
    ASSERT_FALSE(writePipeliningCsv(plan, path.string(), kRefuseRecompute).ok()) << "R is refused";
    auto written = writePipeliningCsv(plan, path.string(), {.drop_recompute = true});
    ASSERT_TRUE(written.ok()) << written.error().message;
    auto read = readPipeliningCsvFile(path.string());
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(read->ranks.size(), 2u);
    EXPECT_EQ(read->computeOrder()[1], actions({"1F0", "1B0", "1F1", "1B1"}));

    {
        std::ofstream bad(path);
        bad << "0F0,0X0\n";
    }
    auto badRead = readPipeliningCsvFile(path.string());
    ASSERT_FALSE(badRead.ok());
    EXPECT_EQ(badRead.error().message, path.string() + ": line 1, column 2: unknown instruction \"0X0\"");
    std::filesystem::remove(path);

    const std::string missing = "/nonexistent-dir/schedule.csv";
    auto notThere = readPipeliningCsvFile(missing);
    ASSERT_FALSE(notThere.ok());
    EXPECT_NE(notThere.error().message.find(missing), std::string::npos);
    auto unwritable = writePipeliningCsv(plan, missing, {.drop_recompute = true});
    ASSERT_FALSE(unwritable.ok());
    EXPECT_NE(unwritable.error().message.find(missing), std::string::npos);
}

}  // namespace
}  // namespace mario
