// PyTorch pipelining CSVs (torch.distributed.pipelining _dump_csv / _load_csv): export of
// hand-made and generated plans in both formats, refusals, import of what PyTorch and
// spreadsheets write, PyTorch's own files (rows copied from its schedules, idle slots as empty
// cells) with their inferred placement, order errors that point at the offending cell, and
// the round trip for generated plans.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "TestPlans.h"
#include "io/PipeliningCsv.h"
#include "io/PipeliningImport.h"
#include "io/PipeliningValidation.h"
#include "sim/Simulator.h"
#include "sim/Validator.h"

namespace mario {
namespace {

using Programs = std::vector<std::vector<Instruction>>;
using Kind = PipeliningCsvAction::Kind;

// Rows as PyTorch writes them (Python's csv module: "\r\n", None as an empty cell), traced
// from torch/distributed/pipelining/schedules.py.
// ScheduleLoopedBFS P=4, v=2, M=8 (§1)
constexpr const char* kLoopedBfsP4V2M8 =
    "0F0,0F1,0F2,0F3,0F4,0F5,0F6,0F7,4F0,4F1,4F2,4F3,4F4,4F5,4F6,4F7,,,,,,,4B7,4B6,4B5,4B4,4B3,4B2,4B1,"
    "4B0,0B7,0B6,0B5,0B4,0B3,0B2,0B1,0B0\r\n"
    ",1F0,1F1,1F2,1F3,1F4,1F5,1F6,1F7,5F0,5F1,5F2,5F3,5F4,5F5,5F6,5F7,,,,,5B7,5B6,5B5,5B4,5B3,5B2,5B1,"
    "5B0,1B7,1B6,1B5,1B4,1B3,1B2,1B1,1B0\r\n"
    ",,2F0,2F1,2F2,2F3,2F4,2F5,2F6,2F7,6F0,6F1,6F2,6F3,6F4,6F5,6F6,6F7,,,6B7,6B6,6B5,6B4,6B3,6B2,6B1,6B0,"
    "2B7,2B6,2B5,2B4,2B3,2B2,2B1,2B0\r\n"
    ",,,3F0,3F1,3F2,3F3,3F4,3F5,3F6,3F7,7F0,7F1,7F2,7F3,7F4,7F5,7F6,7F7,7B7,7B6,7B5,7B4,7B3,7B2,7B1,7B0,"
    "3B7,3B6,3B5,3B4,3B3,3B2,3B1,3B0\r\n";
// ScheduleInterleaved1F1B P=4, v=2, M=8 (§2.3)
constexpr const char* kInterleaved1F1BP4V2M8 =
    "0F0,0F1,0F2,0F3,4F0,4F1,4F2,4F3,0F4,0F5,,,,,0F6,4B0,0F7,4B1,4F4,4B2,4F5,4B3,4F6,0B0,4F7,0B1,,0B2,,"
    "0B3,,4B4,,4B5,,4B6,,4B7,,0B4,,0B5,,0B6,,0B7\r\n"
    ",1F0,1F1,1F2,1F3,5F0,5F1,5F2,5F3,,,,1F4,5B0,1F5,5B1,1F6,5B2,1F7,5B3,5F4,1B0,5F5,1B1,5F6,1B2,5F7,1B3,"
    ",5B4,,5B5,,5B6,,5B7,,1B4,,1B5,,1B6,,1B7\r\n"
    ",,2F0,2F1,2F2,2F3,6F0,6F1,,,6F2,6B0,6F3,6B1,2F4,6B2,2F5,6B3,2F6,2B0,2F7,2B1,6F4,2B2,6F5,2B3,6F6,6B4,"
    "6F7,6B5,,6B6,,6B7,,2B4,,2B5,,2B6,,2B7\r\n"
    ",,,3F0,3F1,3F2,3F3,,7F0,7B0,7F1,7B1,7F2,7B2,7F3,7B3,3F4,3B0,3F5,3B1,3F6,3B2,3F7,3B3,7F4,7B4,7F5,7B5,"
    "7F6,7B6,7F7,7B7,,3B4,,3B5,,3B6,,3B7\r\n";
// ScheduleInterleavedZeroBubble P=4, v=2, M=8 (§2.4)
constexpr const char* kInterleavedZbP4V2M8 =
    "0F0,0F1,0F2,0F3,4F0,4F1,4F2,,,,4F3,4I0,4W0,0F4,4I1,4W1,0F5,4I2,4W2,0F6,4I3,4W3,0F7,0I0,0W0,4F4,0I1,"
    "0W1,4F5,0I2,0W2,4F6,0I3,0W3,4F7,4I4,4W4,4I5,4W5,4I6,4W6,4I7,4W7,0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\r\n"
    ",1F0,1F1,1F2,1F3,5F0,5F1,,,5F2,5I0,5F3,5I1,5W0,1F4,5I2,5W1,1F5,5I3,5W2,1F6,1I0,5W3,1F7,1I1,1W0,5F4,"
    "1I2,1W1,5F5,1I3,1W2,5F6,5I4,1W3,5F7,5I5,5W4,5I6,5W5,5I7,5W6,1I4,5W7,1I5,1W4,1I6,1W5,1I7,1W6,1W7\r\n"
    ",,2F0,2F1,2F2,2F3,6F0,,6F1,6I0,6F2,6I1,6F3,6I2,6W0,2F4,6I3,6W1,2F5,2I0,6W2,2F6,2I1,6W3,2F7,2I2,2W0,"
    "6F4,2I3,2W1,6F5,6I4,2W2,6F6,6I5,2W3,6F7,6I6,6W4,6I7,6W5,2I4,6W6,2I5,6W7,2I6,2W4,2I7,2W5,2W6,2W7\r\n"
    ",,,3F0,3F1,3F2,3F3,7F0,7I0,7F1,7I1,7F2,7I2,7F3,7I3,7W0,3F4,3I0,7W1,3F5,3I1,7W2,3F6,3I2,7W3,3F7,3I3,"
    "3W0,7F4,7I4,3W1,7F5,7I5,3W2,7F6,7I6,3W3,7F7,7I7,7W4,3I4,7W5,3I5,7W6,3I6,7W7,3I7,3W4,3W5,3W6,3W7\r\n";
// ScheduleInterleavedZeroBubble P=4, v=2, M=2, after its bubble pass (§2.4)
constexpr const char* kInterleavedZbP4V2M2 =
    "0F0,0F1,,,4F0,4F1,,,,4I0,4W0,4I1,4W1,0I0,0W0,0I1,0W1\r\n"
    ",1F0,1F1,,,5F0,5F1,,,5I0,5I1,5W0,1I0,5W1,1I1,1W0,1W1\r\n"
    ",,2F0,2F1,,,6F0,,6F1,6I0,6I1,2I0,6W0,2I1,6W1,2W0,2W1\r\n"
    ",,,3F0,3F1,,,7F0,7I0,7F1,7I1,3I0,3I1,7W0,7W1,3W0,3W1\r\n";
// ScheduleZBVZeroBubble P=2, M=4 (§3); rank 1 starts with an empty cell
constexpr const char* kZbvP2M4 =
    "0F0,0F1,0F2,3F0,3I0,3W0,3F1,3I1,3W1,0F3,0I0,0W0,3F2,3I2,3W2,0I1,0W1,3F3,3I3,3W3,0I2,0W2,0I3,0W3\r\n"
    ",1F0,2F0,1F1,2F1,2I0,2W0,1F2,1I0,1W0,2F2,2I1,2W1,1F3,1I1,1W1,2F3,2I2,2W2,1I2,2I3,1I3,1W2,2W3,1W3\r\n";
// ScheduleZBVZeroBubble P=4, M=8 (§3)
constexpr const char* kZbvP4M8 =
    "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,7I3,7W3,0F7,0I0,0W0,7F4,7I4,7W4,"
    "0I1,0W1,7F5,7I5,7W5,0I2,0W2,7F6,7I6,7W6,0I3,0W3,7F7,7I7,7W7,0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\r\n"
    ",1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,6I2,6W2,1F6,1I0,1W0,6F4,6I3,6W3,1F7,1I1,"
    "1W1,6F5,6I4,6W4,1I2,1W2,6F6,6I5,6W5,1I3,1W3,6F7,6I6,6W6,1I4,6I7,1I5,1W4,1I6,1W5,1I7,1W6,6W7,1W7\r\n"
    ",,2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,5I1,5W1,2F5,2I0,2W0,5F4,5I2,5W2,2F6,2I1,2W1,5F5,5I3,"
    "5W3,2F7,2I2,2W2,5F6,5I4,5W4,2I3,2W3,5F7,5I5,5W5,2I4,5I6,2I5,5I7,2I6,2W4,2I7,2W5,5W6,5W7,2W6,2W7\r\n"
    ",,,3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,4I0,4W0,3F4,3I0,3W0,4F4,4I1,4W1,3F5,3I1,3W1,4F5,4I2,4W2,3F6,3I2,"
    "3W2,4F6,4I3,4W3,3F7,3I3,3W3,4F7,4I4,4W4,3I4,4I5,3I5,4I6,3I6,4I7,3I7,3W4,4W5,4W6,4W7,3W5,3W6,3W7\r\n";
// ScheduleDualPipeV P=2, M=4 (§4)
constexpr const char* kDualPipeVP2M4 =
    "0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,(3F2;0B0)OVERLAP_F_B,3B2,(3F3;0B1)OVERLAP_F_B,3B3,"
    "0I2,0W2,0I3,0W3\r\n"
    "1F0,2F0,1F1,2F1,1F2,2B0,(2F2;1B0)OVERLAP_F_B,(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,2B2,1B2,2I3,"
    "1I3,2W3,1W3\r\n";
// ScheduleDualPipeV P=4, M=8 (§4)
constexpr const char* kDualPipeVP4M8 =
    "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,(0F7;7B3)OVERLAP_F_B,"
    "(7F4;0B0)OVERLAP_F_B,7B4,(7F5;0B1)OVERLAP_F_B,7B5,(7F6;0B2)OVERLAP_F_B,7B6,(7F7;0B3)OVERLAP_F_B,7B7,"
    "0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\r\n"
    "1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,(1F6;6B2)OVERLAP_F_B,(6F4;1B0)OVERLAP_F_B,"
    "(1F7;6B3)OVERLAP_F_B,(6F5;1B1)OVERLAP_F_B,6B4,(6F6;1B2)OVERLAP_F_B,6B5,(6F7;1B3)OVERLAP_F_B,6B6,1B4,"
    "6I7,1I5,6W7,1I6,1W5,1I7,1W6,1W7\r\n"
    "2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,(2F5;5B1)OVERLAP_F_B,(5F4;2B0)OVERLAP_F_B,"
    "(2F6;5B2)OVERLAP_F_B,(5F5;2B1)OVERLAP_F_B,(2F7;5B3)OVERLAP_F_B,(5F6;2B2)OVERLAP_F_B,5B4,"
    "(5F7;2B3)OVERLAP_F_B,5B5,2B4,5B6,2I5,5I7,2I6,2W5,2I7,5W7,2W6,2W7\r\n"
    "3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,3F4,4B0,(4F4;3B0)OVERLAP_F_B,(3F5;4B1)OVERLAP_F_B,"
    "(4F5;3B1)OVERLAP_F_B,(3F6;4B2)OVERLAP_F_B,(4F6;3B2)OVERLAP_F_B,(3F7;4B3)OVERLAP_F_B,"
    "(4F7;3B3)OVERLAP_F_B,4B4,3B4,4B5,3B5,4I6,3I6,4I7,3I7,4W6,3W6,4W7,3W7\r\n";
// Interleaved1F1B P=2, v=2, M=4 lowered: compute_comms (§5.4)
constexpr const char* kLoweredInterleaved1F1BP2 =
    "0UNSHARD,2UNSHARD,0F0,0SEND_F0,2RECV_F0,0F1,0SEND_F1,2RECV_F1,2F0,2SEND_F0,2F1,2SEND_F1,2RECV_B0,"
    "0F2,0SEND_F2,2B0,2SEND_B0,2RECV_B1,0F3,0SEND_F3,2RECV_F2,2B1,2SEND_B1,0RECV_B0,2F2,2SEND_F2,"
    "2RECV_F3,0B0,0RECV_B1,2F3,2SEND_F3,0B1,2RECV_B2,2B2,2SEND_B2,2RECV_B3,2B3,2SEND_B3,2REDUCE_GRAD,"
    "2RESHARD,0RECV_B2,0B2,0RECV_B3,0B3,0REDUCE_GRAD,0RESHARD\r\n"
    "1UNSHARD,3UNSHARD,1RECV_F0,1F0,1SEND_F0,1RECV_F1,1F1,1SEND_F1,3RECV_F0,3F0,3RECV_F1,3B0,3SEND_B0,"
    "1RECV_F2,3F1,1RECV_B0,3B1,3SEND_B1,1RECV_F3,1F2,1SEND_F2,1RECV_B1,1B0,1SEND_B0,3RECV_F2,1F3,"
    "1SEND_F3,1B1,1SEND_B1,3RECV_F3,3F2,3B2,3SEND_B2,1RECV_B2,3F3,3B3,3SEND_B3,1RECV_B3,3REDUCE_GRAD,"
    "3RESHARD,1B2,1SEND_B2,1B3,1SEND_B3,1REDUCE_GRAD,1RESHARD\r\n";
// DualPipeV P=2, M=4 lowered: compute_comms (§5.4)
constexpr const char* kLoweredDualPipeVP2 =
    "0UNSHARD,3UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,3RECV_F0,0F2,0SEND_F2,3F0,3RECV_F1,3I0,3SEND_B0,3W0,3F1,"
    "3RECV_F2,0RECV_B0,(0F3;3B1)OVERLAP_F_B,0SEND_F3,3SEND_B1,(3F2;0B0)OVERLAP_F_B,3RECV_F3,0RECV_B1,3B2,"
    "3SEND_B2,(3F3;0B1)OVERLAP_F_B,0RECV_B2,3B3,3SEND_B3,3REDUCE_GRAD,0RECV_B3,3RESHARD,0I2,0W2,0I3,0W3,"
    "0REDUCE_GRAD,0RESHARD\r\n"
    "1UNSHARD,2UNSHARD,1RECV_F0,1F0,1RECV_F1,2F0,2SEND_F0,1RECV_F2,1F1,2F1,2SEND_F1,2RECV_B0,1F2,2B0,"
    "(2F2;1B0)OVERLAP_F_B,2SEND_F2,1SEND_B0,1RECV_F3,2RECV_B1,(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,"
    "2SEND_F3,1SEND_B1,2RECV_B2,2B2,1B2,1SEND_B2,2RECV_B3,2I3,1I3,1SEND_B3,2W3,2REDUCE_GRAD,2RESHARD,1W3,"
    "1REDUCE_GRAD,1RESHARD\r\n";

std::vector<Instruction> actions(const std::vector<const char*>& texts) {
    std::vector<Instruction> program;
    for (const char* text : texts) program.push_back(parseAction(text).value());
    return program;
}

// Two devices with checkpointing, a split backward, and the data-parallel tail.
Plan handMadePlan() {
    Plan plan;
    plan.stages = {StageSpec{0, 0, {}, {}}, StageSpec{1, 1, {}, {}}};
    plan.devices = {
        {0, actions({"0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0R0", "0B0", "0RECV_B1",
                     "0I1", "0W1", "0REDUCE_GRAD", "0OPT"})},
        {1, actions({"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1", "1B1", "1SEND_B1"})},
    };
    return plan;
}

std::string exported(const Plan& plan, PipeliningCsvOptions options = {}) {
    auto csv = toPipeliningCsv(plan, options);
    EXPECT_TRUE(csv.ok()) << csv.error().message;
    return csv.ok() ? *csv : std::string{};
}

// The CLI's default: recomputation is refused unless dropped on purpose.
constexpr PipeliningCsvOptions kRefuseRecompute{.drop_recompute = false};

std::string exportError(const Plan& plan, PipeliningCsvOptions options = kRefuseRecompute) {
    auto csv = toPipeliningCsv(plan, options);
    EXPECT_FALSE(csv.ok());
    return csv.ok() ? std::string{} : csv.error().message;
}

PipeliningCsv parsed(std::string_view text) {
    auto csv = parsePipeliningCsv(text);
    EXPECT_TRUE(csv.ok()) << csv.error().message;
    return csv.ok() ? *csv : PipeliningCsv{};
}

std::string parseError(std::string_view text) {
    auto csv = parsePipeliningCsv(text);
    EXPECT_FALSE(csv.ok());
    return csv.ok() ? std::string{} : csv.error().message;
}

std::optional<ImportedPipeliningPlan> imported(std::string_view text) {
    auto plan = importPipeliningCsv(parsed(text), "test");
    EXPECT_TRUE(plan.ok()) << plan.error().message;
    if (!plan) return std::nullopt;
    return std::move(*plan);
}

std::string importError(std::string_view text) {
    auto plan = importPipeliningCsv(parsed(text), "test");
    EXPECT_FALSE(plan.ok());
    return plan.ok() ? std::string{} : plan.error().message;
}

std::vector<int> stageDevices(const Plan& plan) {
    std::vector<int> devices;
    for (const auto& stage : plan.stages) devices.push_back(stage.device);
    return devices;
}

// Per device, its computations with a micro-batch (F, R, B, I, W) in program order.
Programs computeOrderOf(const Plan& plan) {
    Programs order;
    for (const auto& device : plan.devices) {
        auto& program = order.emplace_back();
        for (const auto& ins : device.program)
            if (isCompute(ins.op) && hasMicrobatch(ins.op)) program.push_back(ins);
    }
    return order;
}

// Valid, and simulates to the end; returns the makespan.
double runsCleanly(const Plan& plan) {
    const auto report = Validator::validate(plan);
    EXPECT_TRUE(report.ok()) << report.summary();
    auto sim = Simulator::run(plan);
    EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().message);
    if (!sim) return 0;
    EXPECT_FALSE(sim->deadlocked);
    return sim->makespan_ms;
}

bool hasNoteStartingWith(const ImportedPipeliningPlan& plan, const std::string& start) {
    return std::any_of(plan.notes.begin(), plan.notes.end(), [&](const std::string& n) { return n.rfind(start, 0) == 0; });
}

// ---- export ---------------------------------------------------------------------------------

TEST(PipeliningCsvExport, RefusesRecomputation) {
    EXPECT_EQ(exportError(handMadePlan()), "the plan recomputes 1 forward (R); PyTorch's pipelining has no recompute action");
}

TEST(PipeliningCsvExport, DropsRecomputationWhenAsked) {
    EXPECT_EQ(recomputeCount(handMadePlan()), 1);
    EXPECT_EQ(exported(handMadePlan(), {.drop_recompute = true}),
              "0F0,0F1,0B0,0I1,0W1\n"
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
    EXPECT_EQ(exportError(*checkpointed), "the plan recomputes 32 forwards (R); PyTorch's pipelining has no recompute action");
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
    // Traced by hand through PyTorch's lowering: sREDUCE_GRAD right after the stage's last B
    // or W (behind the SEND_B that B starts); each RECV lands on the receiver when the sender
    // sends, so rank 1 holds 1RECV_F1 before 1B0. OPT and the plan's own REDUCE_GRAD are not
    // PyTorch's.
    EXPECT_EQ(exported(handMadePlan(), {.format = PipeliningCsvFormat::ComputeComms, .drop_recompute = true}),
              "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0I1,0W1,0REDUCE_GRAD\n"
              "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1,1REDUCE_GRAD\n");
}

TEST(PipeliningCsvExport, ComputeCommsIsWhatPyTorchLowers) {
    // PyTorch's own lowering of its Interleaved1F1B (P=2, v=2, M=4), FSDP cells aside: Mario's
    // export of the same compute order must write the same programs, cell for cell.
    const auto plan = imported(kLoweredInterleaved1F1BP2);
    ASSERT_TRUE(plan.has_value());
    std::string expected;
    for (const auto& rank : parsed(kLoweredInterleaved1F1BP2).ranks) {
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
    for (const auto& rank : back.ranks) {
        ASSERT_FALSE(rank.empty());
        EXPECT_EQ(rank.back().kind, Kind::Gradient) << "the last stage to finish its gradients ends the rank";
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
    const std::string text =
        "0F0,None,0F1, ,0B0,,0B1,\r\n"
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

TEST(PipeliningCsvParse, OverlapCellExpandsIntoItsPartsInOrder) {
    const PipeliningCsv csv = parsed("0F0,( 0F1 ; 0B0 )OVERLAP_F_B,0B1\n");
    EXPECT_EQ(csv.overlap_cells, 1);
    EXPECT_EQ(csv.computeOrder(), (Programs{actions({"0F0", "0F1", "0B0", "0B1"})}));
    std::vector<int> columns;
    for (const auto& action : csv.ranks[0]) columns.push_back(action.column);
    EXPECT_EQ(columns, (std::vector<int>{1, 2, 2, 3}));
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
    EXPECT_EQ(texts, (std::vector<std::string>{"0UNSHARD", "0F0", "0SEND_F0", "0RECV_B0", "0B0", "0REDUCE_GRAD",
                                               "0RESHARD"}));
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
    if (file.overlapCells > 0)
        EXPECT_TRUE(hasNoteStartingWith(*plan, std::to_string(file.overlapCells) + " OVERLAP_F_B cells: "));
    if (file.fsdpActions > 0)
        EXPECT_TRUE(hasNoteStartingWith(*plan, std::to_string(file.fsdpActions) + " UNSHARD/RESHARD actions dropped"));
    if (file.communicationCells > 0)
        EXPECT_TRUE(hasNoteStartingWith(*plan, std::to_string(file.communicationCells) + " communication cells"));
    if (file.gradientCells > 0)
        EXPECT_TRUE(hasNoteStartingWith(*plan, std::to_string(file.gradientCells) + " REDUCE_GRAD cells dropped"));
    EXPECT_EQ(plan->notes.size(), 1u + (file.overlapCells > 0) + (file.fsdpActions > 0) +
                                      (file.communicationCells > 0) + (file.gradientCells > 0));

    if (file.sameAsMario) {
        // Mario's generator follows PyTorch's algorithm, and its unit plan has the same costs.
        const Plan mario = test::unitPlan(*file.sameAsMario, static_cast<int>(csv.ranks.size()), file.microbatches,
                                          file.chunks);
        EXPECT_EQ(computeOrderOf(mario), csv.computeOrder());
        EXPECT_EQ(stageDevices(mario), file.stageRank);
        EXPECT_DOUBLE_EQ(makespan, Simulator::run(mario)->makespan_ms);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, PyTorchFiles,
    ::testing::Values(
        PyTorchFile{"LoopedBfs", kLoopedBfsP4V2M8, kLoopedP4V2, 8, 0, 0, 0, 0, Scheme::LoopedBfs, 2},
        PyTorchFile{"Interleaved1F1B", kInterleaved1F1BP4V2M8, kLoopedP4V2, 8},
        PyTorchFile{"InterleavedZeroBubble", kInterleavedZbP4V2M8, kLoopedP4V2, 8, 0, 0, 0, 0, Scheme::InterleavedZb, 2},
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

// ---- order errors -------------------------------------------------------------------------------

TEST(PipeliningImportErrors, BackwardWithoutForward) {
    EXPECT_EQ(importError("0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n"
                          "1F0,1B0,1F1,1B1,1F2,1B2,None,,1B3\n"),
              "line 2: stage 1 micro-batch 3 has a backward (column 9, 1B3) but no forward");
}

TEST(PipeliningImportErrors, InputGradientWithoutForward) {
    EXPECT_EQ(importError("0F0,0I0,0W0,0I1,0W1\n"), "line 1: stage 0 micro-batch 1 has a backward (column 4, 0I1) but no forward");
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
    EXPECT_EQ(importError("0F0,0F1,0B0\n"), "line 1: stage 0 micro-batch 1 has a forward (column 2, 0F1) but no backward");
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
    EXPECT_EQ(importError("0F0,0F2,0B0,0B2\n1F0,1F2,1B0,1B2\n"),
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
    const auto path = std::filesystem::temp_directory_path() /
                      ("mario_pipelining_csv_test_" + std::to_string(::getpid()) + ".csv");
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
