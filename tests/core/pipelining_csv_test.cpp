// PyTorch pipelining CSVs (torch.distributed.pipelining _dump_csv / _load_csv): export of
// hand-made and generated plans in both formats, refusals, and parsing what PyTorch and
// spreadsheets write. Import into plans: pipelining_import_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/core/PipeliningCsvFixtures.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using namespace csvtest;

// ---- export ---------------------------------------------------------------------------------

TEST(PipeliningCsvExport, RefusesRecomputation) {
    EXPECT_EQ(exportError(handMadePlan()),
              "the plan recomputes 1 forward (R); PyTorch's pipelining has no recompute action");
}

TEST(PipeliningCsvExport, DropsRecomputationWhenAsked) {
    EXPECT_EQ(recomputeCount(handMadePlan()), 1);
    EXPECT_EQ(exported(handMadePlan(), {.drop_recompute = true}), "0F0,0F1,0B0,0I1,0W1\n"
                                                                  "1F0,1B0,1F1,1B1\n");
    // The library's default (the workbench's export) drops them.
    EXPECT_EQ(exported(handMadePlan()), exported(handMadePlan(), {.drop_recompute = true}));
}

TEST(PipeliningCsvExport, CheckpointedPlanDropsOneRecomputePerForward) {
    const Plan plain = test::unitPlan(Scheme::OneFOneB, 4, 8);
    auto checkpointed = test::makeUnitPlanWithPasses(Scheme::OneFOneB, 4, 8, 1, "checkpoint");
    ASSERT_TRUE(checkpointed.ok()) << checkpointed.error().message;
    // Every forward has its backward on its own device: 4 stages x 8 micro-batches.
    EXPECT_EQ(recomputeCount(*checkpointed), 32);
    EXPECT_EQ(exportError(*checkpointed),
              "the plan recomputes 32 forwards (R); PyTorch's pipelining has no recompute action");
    // Checkpointing only adds R before each backward; without them the order is the plain one.
    EXPECT_EQ(exported(*checkpointed, {.drop_recompute = true}), exported(plain));
}

TEST(PipeliningCsvExport, PutsEachDeviceOnTheLineOfItsRank) {
    Plan plan;
    plan.devices = {{2, actions({"1F0", "1B0"})}, {0, actions({"0F0", "0SEND_F0", "0B0"})}};
    EXPECT_EQ(exported(plan), "0F0,0B0\n\n1F0,1B0\n");
}

TEST(PipeliningCsvExport, RefusesMoreThanOneChain) {
    for (auto [scheme, microbatches] : {std::pair{Scheme::Chimera, 4}, std::pair{Scheme::DualPipe, 8}}) {
        SCOPED_TRACE(std::string(schemeName(scheme)));
        EXPECT_EQ(exportError(test::unitPlan(scheme, 4, microbatches)),
                  "the plan has 2 stage chains; PyTorch's pipelining runs one chain (stages 0..S-1)");
    }
}

TEST(PipeliningCsvExport, RefusesAChainOutOfOrder) {
    Plan plan = handMadePlan();
    plan.pipelines = {{1, 0}};
    EXPECT_EQ(exportError(plan, {.drop_recompute = true}),
              "the plan's chain runs stage 1 at position 0; PyTorch's pipelining runs stages 0..S-1 in order");
}

TEST(PipeliningCsvExport, ComputeCommsLowersAsPyTorchDoes) {
    // Traced by hand through PyTorch 2.15's lowering: sREDUCE_GRAD and its wait right after
    // the stage's last B or W (behind the SEND_B that B starts); each RECV lands on the receiver
    // when the sender sends, so rank 1 holds 1RECV_F1 before 1B0; a forward's send is retired
    // (WAIT_SEND_F) right after the backward that consumed it, rank 1's backward sends at the
    // end, in the order sent. OPT and the plan's own REDUCE_GRAD are not PyTorch's.
    EXPECT_EQ(exported(handMadePlan(), {.format = PipeliningCsvFormat::ComputeComms, .drop_recompute = true}),
              "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0WAIT_SEND_F0,0RECV_B1,0I1,0WAIT_SEND_F1,0W1,0REDUCE_GRAD,"
              "0WAIT_REDUCE_GRAD\n"
              "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1WAIT_REDUCE_GRAD,1WAIT_SEND_B0,"
              "1WAIT_SEND_B1\n");
}

TEST(PipeliningCsvExport, ComputeCommsIsWhatPyTorchLowers) {
    // PyTorch 2.15's own lowering of its Interleaved1F1B (P=2, v=2, M=4), FSDP cells aside:
    // Mario's export of the same compute order must write the same programs, cell for cell,
    // waits included.
    const auto plan = imported(kLoweredInterleaved1F1BP2Torch215);
    ASSERT_TRUE(plan.has_value());
    std::string expected;
    for (const auto& rank : parsed(kLoweredInterleaved1F1BP2Torch215).ranks) {
        std::string line;
        for (const auto& action : rank) {
            if (action.kind == Kind::Unshard || action.kind == Kind::Reshard) continue;
            if (!line.empty()) line += ',';
            line += action.text();
        }
        expected += line + "\n";
    }
    EXPECT_EQ(exported(plan->plan, {.format = PipeliningCsvFormat::ComputeComms}), expected);
}

TEST(PipeliningCsvExport, ComputeCommsOfZbvKeepsTheTurnOnItsRank) {
    // ZBV on 2 ranks: stages 1 and 2 share rank 1, so nothing crosses between them; the
    // boundaries 0|1 and 2|3 cross, each 4 micro-batches x (SEND + RECV) x 2 directions.
    const std::string csv = exported(test::unitPlan(Scheme::Zbv, 2, 4), {.format = PipeliningCsvFormat::ComputeComms});
    for (const char* local : {"1SEND_F", "2RECV_F", "2SEND_B", "1RECV_B"})
        EXPECT_EQ(csv.find(local), std::string::npos) << local;
    const PipeliningCsv back = parsed(csv);
    EXPECT_EQ(back.count(Kind::Communication), 32);
    EXPECT_EQ(back.count(Kind::Gradient), 4);
    // PyTorch 2.15 retires every send and every reduction with a wait of its own, on its rank
    // and after it: 16 sends and 4 reductions.
    EXPECT_EQ(back.count(Kind::Wait), 20);
    for (const auto& rank : back.ranks) {
        std::vector<std::string> open;
        for (const auto& action : rank) {
            const bool send = action.kind == Kind::Communication && isSend(action.instruction.op);
            if (send || action.kind == Kind::Gradient) open.push_back(action.text());
            if (action.kind != Kind::Wait) continue;
            const std::string retired = action.instruction.op == Op::ReduceGrad
                                            ? std::to_string(action.instruction.stage) + "REDUCE_GRAD"
                                            : toActionString(action.instruction);
            const auto it = std::find(open.begin(), open.end(), retired);
            ASSERT_NE(it, open.end()) << action.text() << " retires nothing before it";
            open.erase(it);
        }
        EXPECT_TRUE(open.empty()) << open.size() << " sends or reductions never waited for";
    }
}

TEST(PipeliningCsvExport, FormatNames) {
    EXPECT_EQ(parsePipeliningCsvFormat("compute_only").value(), PipeliningCsvFormat::ComputeOnly);
    EXPECT_EQ(parsePipeliningCsvFormat("compute_comms").value(), PipeliningCsvFormat::ComputeComms);
    auto unknown = parsePipeliningCsvFormat("comms");
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().message, "unknown CSV format \"comms\" (compute_only or compute_comms)");
}

// ---- parsing ----------------------------------------------------------------------------------

TEST(PipeliningCsvParse, ImportsWhatPyTorchWrites) {
    // Idle slots as "None" and as blank cells, padding, a trailing comma, CRLF, trailing
    // blank lines.
    const std::string text = "0F0,None,0F1, ,0B0,,0B1,\r\n"
                             " None , 1F0,1B0 ,1F1,1B1\r\n"
                             "\r\n";
    EXPECT_EQ(parsed(text).computeOrder(),
              (Programs{actions({"0F0", "0F1", "0B0", "0B1"}), actions({"1F0", "1B0", "1F1", "1B1"})}));
}

TEST(PipeliningCsvParse, ImportsSplitBackwardQuotedCellsAndByteOrderMark) {
    EXPECT_EQ(parsed("\xEF\xBB\xBF\"0F0\",0I0,0W0\n1F0,1I0,1W0").computeOrder(),
              (Programs{actions({"0F0", "0I0", "0W0"}), actions({"1F0", "1I0", "1W0"})}));
}

TEST(PipeliningCsvParse, BlankLineInTheMiddleIsAnIdleRank) {
    const PipeliningCsv csv = parsed("0F0,0B0\n\n2F0,2B0\n");
    ASSERT_EQ(csv.ranks.size(), 3u);
    EXPECT_TRUE(csv.ranks[1].empty());
    EXPECT_EQ(csv.computeOrder()[2], actions({"2F0", "2B0"}));
}

TEST(PipeliningCsvParse, EmptyTextHasNoRanks) {
    EXPECT_TRUE(parsed("").ranks.empty());
    EXPECT_EQ(importError(""), "the file holds no actions");
}

TEST(PipeliningCsvParse, OverlapCellBecomesAPairForwardFirst) {
    for (const char* cell : {"( 0F1 ; 0B0 )OVERLAP_F_B", "(0B0;0F1)OVERLAP_F_B"}) {
        const PipeliningCsv csv = parsed(std::string("0F0,") + cell + ",0B1\n");
        EXPECT_EQ(csv.overlap_cells, 1);
        EXPECT_EQ(csv.unpaired_overlap_cells, 0);
        EXPECT_EQ(csv.computeOrder(), (Programs{actions({"0F0", "0F1", "0B0", "0B1"})}));
        std::vector<int> columns;
        std::vector<bool> overlapped;
        for (const auto& action : csv.ranks[0]) {
            columns.push_back(action.column);
            overlapped.push_back(action.instruction.overlapped);
        }
        EXPECT_EQ(columns, (std::vector<int>{1, 2, 2, 3}));
        EXPECT_EQ(overlapped, (std::vector<bool>{false, true, false, false}));
    }
}

TEST(PipeliningCsvParse, OverlapCellOfOtherPartsRunsPartAfterPart) {
    const PipeliningCsv csv = parsed("0F0,0F1,(0B0;0B1)OVERLAP_F_B\n");
    EXPECT_EQ(csv.overlap_cells, 0);
    EXPECT_EQ(csv.unpaired_overlap_cells, 1);
    EXPECT_EQ(csv.computeOrder(), (Programs{actions({"0F0", "0F1", "0B0", "0B1"})}));
    for (const auto& action : csv.ranks[0]) EXPECT_FALSE(action.instruction.overlapped);
}

TEST(PipeliningCsvExport, WritesAPairAsOneCompositeCell) {
    const PipeliningCsv csv = parsed("0F0,(0F1;0B0)OVERLAP_F_B,0B1\n");
    Plan plan;
    plan.stages.push_back(StageSpec{0, 0, {}, {}});
    plan.devices.push_back({0, csv.computeOrder()[0]});
    auto text = toPipeliningCsv(plan);
    ASSERT_TRUE(text.ok()) << text.error().message;
    EXPECT_EQ(*text, "0F0,(0F1;0B0)OVERLAP_F_B,0B1\n");
}

TEST(PipeliningCsvParse, KeepsFsdpGradientAndCommunicationCellsWithTheirKind) {
    const PipeliningCsv csv = parsed("0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n");
    ASSERT_EQ(csv.ranks[0].size(), 7u);
    std::vector<Kind> kinds;
    std::vector<std::string> texts;
    for (const auto& action : csv.ranks[0]) {
        kinds.push_back(action.kind);
        texts.push_back(action.text());
    }
    EXPECT_EQ(kinds, (std::vector<Kind>{Kind::Unshard, Kind::Compute, Kind::Communication, Kind::Communication,
                                        Kind::Compute, Kind::Gradient, Kind::Reshard}));
    EXPECT_EQ(texts,
              (std::vector<std::string>{"0UNSHARD", "0F0", "0SEND_F0", "0RECV_B0", "0B0", "0REDUCE_GRAD", "0RESHARD"}));
    EXPECT_EQ(csv.computeOrder(), (Programs{actions({"0F0", "0B0"})}));
}

TEST(PipeliningCsvParse, UnknownActionNamesLineAndColumn) {
    EXPECT_EQ(parseError("0F0,0B0\n1F0,1B0,,None,1Q3\n"), "line 2, column 5: unknown instruction \"1Q3\"");
}

TEST(PipeliningCsvParse, MalformedActionsNameTheirCell) {
    for (const char* text : {"0F0\r\n1F\r\n", "0F0\nx\n", "0F0\n0UNSHARD3\n", "0F0\n(0F0;0B0)OVERLAP\n",
                             "0F0\n(0F0;0SEND_F0)OVERLAP_F_B\n", "0F0\n( ; )OVERLAP_F_B\n", "0F0\n0OVERLAP_F_B0\n",
                             "0F0\n(0F0;0Z0)OVERLAP_F_B\n"}) {
        SCOPED_TRACE(text);
        const std::string message = parseError(text);
        EXPECT_EQ(message.rfind("line 2, column 1: ", 0), 0u) << message;
    }
    EXPECT_EQ(parseError("(0F0;0B0)OVERLAP\n"),
              "line 1, column 1: \"(0F0;0B0)OVERLAP\" is a composite of type \"OVERLAP\"; PyTorch's composite is "
              "OVERLAP_F_B");
    EXPECT_EQ(parseError("(0F0;0SEND_F0)OVERLAP_F_B\n"),
              "line 1, column 1: \"(0F0;0SEND_F0)OVERLAP_F_B\" holds \"0SEND_F0\"; OVERLAP_F_B overlaps computations "
              "only");
}

}  // namespace
}  // namespace mario
