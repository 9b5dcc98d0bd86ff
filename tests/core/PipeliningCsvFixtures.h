#pragma once
// What the PyTorch pipelining CSV tests share: rows as PyTorch writes them, traced from
// torch/distributed/pipelining/schedules.py (the § numbers name the schedule), a hand-made
// plan, and helpers that turn a failed step into a test failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/io/PipeliningCsv.h"
#include "core/io/PipeliningImport.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"

namespace mario::csvtest {

using Programs = std::vector<std::vector<Instruction>>;
using Kind = PipeliningCsvAction::Kind;

// Rows as PyTorch writes them (Python's csv module: "\r\n", None as an empty cell), traced
// from torch/distributed/pipelining/schedules.py.
// ScheduleLoopedBFS P=4, v=2, M=8 (§1)
inline constexpr const char* kLoopedBfsP4V2M8 =
    "0F0,0F1,0F2,0F3,0F4,0F5,0F6,0F7,4F0,4F1,4F2,4F3,4F4,4F5,4F6,4F7,,,,,,,4B7,4B6,4B5,4B4,4B3,4B2,4B1,"
    "4B0,0B7,0B6,0B5,0B4,0B3,0B2,0B1,0B0\r\n"
    ",1F0,1F1,1F2,1F3,1F4,1F5,1F6,1F7,5F0,5F1,5F2,5F3,5F4,5F5,5F6,5F7,,,,,5B7,5B6,5B5,5B4,5B3,5B2,5B1,"
    "5B0,1B7,1B6,1B5,1B4,1B3,1B2,1B1,1B0\r\n"
    ",,2F0,2F1,2F2,2F3,2F4,2F5,2F6,2F7,6F0,6F1,6F2,6F3,6F4,6F5,6F6,6F7,,,6B7,6B6,6B5,6B4,6B3,6B2,6B1,6B0,"
    "2B7,2B6,2B5,2B4,2B3,2B2,2B1,2B0\r\n"
    ",,,3F0,3F1,3F2,3F3,3F4,3F5,3F6,3F7,7F0,7F1,7F2,7F3,7F4,7F5,7F6,7F7,7B7,7B6,7B5,7B4,7B3,7B2,7B1,7B0,"
    "3B7,3B6,3B5,3B4,3B3,3B2,3B1,3B0\r\n";
// ScheduleInterleaved1F1B P=4, v=2, M=8 (§2.3)
inline constexpr const char* kInterleaved1F1BP4V2M8 =
    "0F0,0F1,0F2,0F3,4F0,4F1,4F2,4F3,0F4,0F5,,,,,0F6,4B0,0F7,4B1,4F4,4B2,4F5,4B3,4F6,0B0,4F7,0B1,,0B2,,"
    "0B3,,4B4,,4B5,,4B6,,4B7,,0B4,,0B5,,0B6,,0B7\r\n"
    ",1F0,1F1,1F2,1F3,5F0,5F1,5F2,5F3,,,,1F4,5B0,1F5,5B1,1F6,5B2,1F7,5B3,5F4,1B0,5F5,1B1,5F6,1B2,5F7,1B3,"
    ",5B4,,5B5,,5B6,,5B7,,1B4,,1B5,,1B6,,1B7\r\n"
    ",,2F0,2F1,2F2,2F3,6F0,6F1,,,6F2,6B0,6F3,6B1,2F4,6B2,2F5,6B3,2F6,2B0,2F7,2B1,6F4,2B2,6F5,2B3,6F6,6B4,"
    "6F7,6B5,,6B6,,6B7,,2B4,,2B5,,2B6,,2B7\r\n"
    ",,,3F0,3F1,3F2,3F3,,7F0,7B0,7F1,7B1,7F2,7B2,7F3,7B3,3F4,3B0,3F5,3B1,3F6,3B2,3F7,3B3,7F4,7B4,7F5,7B5,"
    "7F6,7B6,7F7,7B7,,3B4,,3B5,,3B6,,3B7\r\n";
// ScheduleInterleavedZeroBubble P=4, v=2, M=8 (§2.4)
inline constexpr const char* kInterleavedZbP4V2M8 =
    "0F0,0F1,0F2,0F3,4F0,4F1,4F2,,,,4F3,4I0,4W0,0F4,4I1,4W1,0F5,4I2,4W2,0F6,4I3,4W3,0F7,0I0,0W0,4F4,0I1,"
    "0W1,4F5,0I2,0W2,4F6,0I3,0W3,4F7,4I4,4W4,4I5,4W5,4I6,4W6,4I7,4W7,0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\r\n"
    ",1F0,1F1,1F2,1F3,5F0,5F1,,,5F2,5I0,5F3,5I1,5W0,1F4,5I2,5W1,1F5,5I3,5W2,1F6,1I0,5W3,1F7,1I1,1W0,5F4,"
    "1I2,1W1,5F5,1I3,1W2,5F6,5I4,1W3,5F7,5I5,5W4,5I6,5W5,5I7,5W6,1I4,5W7,1I5,1W4,1I6,1W5,1I7,1W6,1W7\r\n"
    ",,2F0,2F1,2F2,2F3,6F0,,6F1,6I0,6F2,6I1,6F3,6I2,6W0,2F4,6I3,6W1,2F5,2I0,6W2,2F6,2I1,6W3,2F7,2I2,2W0,"
    "6F4,2I3,2W1,6F5,6I4,2W2,6F6,6I5,2W3,6F7,6I6,6W4,6I7,6W5,2I4,6W6,2I5,6W7,2I6,2W4,2I7,2W5,2W6,2W7\r\n"
    ",,,3F0,3F1,3F2,3F3,7F0,7I0,7F1,7I1,7F2,7I2,7F3,7I3,7W0,3F4,3I0,7W1,3F5,3I1,7W2,3F6,3I2,7W3,3F7,3I3,"
    "3W0,7F4,7I4,3W1,7F5,7I5,3W2,7F6,7I6,3W3,7F7,7I7,7W4,3I4,7W5,3I5,7W6,3I6,7W7,3I7,3W4,3W5,3W6,3W7\r\n";
// ScheduleInterleavedZeroBubble P=4, v=2, M=2, after its bubble pass (§2.4)
inline constexpr const char* kInterleavedZbP4V2M2 = "0F0,0F1,,,4F0,4F1,,,,4I0,4W0,4I1,4W1,0I0,0W0,0I1,0W1\r\n"
                                                    ",1F0,1F1,,,5F0,5F1,,,5I0,5I1,5W0,1I0,5W1,1I1,1W0,1W1\r\n"
                                                    ",,2F0,2F1,,,6F0,,6F1,6I0,6I1,2I0,6W0,2I1,6W1,2W0,2W1\r\n"
                                                    ",,,3F0,3F1,,,7F0,7I0,7F1,7I1,3I0,3I1,7W0,7W1,3W0,3W1\r\n";
// ScheduleZBVZeroBubble P=2, M=4 (§3); rank 1 starts with an empty cell
inline constexpr const char* kZbvP2M4 =
    "0F0,0F1,0F2,3F0,3I0,3W0,3F1,3I1,3W1,0F3,0I0,0W0,3F2,3I2,3W2,0I1,0W1,3F3,3I3,3W3,0I2,0W2,0I3,0W3\r\n"
    ",1F0,2F0,1F1,2F1,2I0,2W0,1F2,1I0,1W0,2F2,2I1,2W1,1F3,1I1,1W1,2F3,2I2,2W2,1I2,2I3,1I3,1W2,2W3,1W3\r\n";
// ScheduleZBVZeroBubble P=4, M=8 (§3)
inline constexpr const char* kZbvP4M8 =
    "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,7I3,7W3,0F7,0I0,0W0,7F4,7I4,7W4,"
    "0I1,0W1,7F5,7I5,7W5,0I2,0W2,7F6,7I6,7W6,0I3,0W3,7F7,7I7,7W7,0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\r\n"
    ",1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,6I2,6W2,1F6,1I0,1W0,6F4,6I3,6W3,1F7,1I1,"
    "1W1,6F5,6I4,6W4,1I2,1W2,6F6,6I5,6W5,1I3,1W3,6F7,6I6,6W6,1I4,6I7,1I5,1W4,1I6,1W5,1I7,1W6,6W7,1W7\r\n"
    ",,2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,5I1,5W1,2F5,2I0,2W0,5F4,5I2,5W2,2F6,2I1,2W1,5F5,5I3,"
    "5W3,2F7,2I2,2W2,5F6,5I4,5W4,2I3,2W3,5F7,5I5,5W5,2I4,5I6,2I5,5I7,2I6,2W4,2I7,2W5,5W6,5W7,2W6,2W7\r\n"
    ",,,3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,4I0,4W0,3F4,3I0,3W0,4F4,4I1,4W1,3F5,3I1,3W1,4F5,4I2,4W2,3F6,3I2,"
    "3W2,4F6,4I3,4W3,3F7,3I3,3W3,4F7,4I4,4W4,3I4,4I5,3I5,4I6,3I6,4I7,3I7,3W4,4W5,4W6,4W7,3W5,3W6,3W7\r\n";
// ScheduleDualPipeV P=2, M=4 (§4)
inline constexpr const char* kDualPipeVP2M4 =
    "0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,(3F2;0B0)OVERLAP_F_B,3B2,(3F3;0B1)OVERLAP_F_B,3B3,"
    "0I2,0W2,0I3,0W3\r\n"
    "1F0,2F0,1F1,2F1,1F2,2B0,(2F2;1B0)OVERLAP_F_B,(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,2B2,1B2,2I3,"
    "1I3,2W3,1W3\r\n";
// ScheduleDualPipeV P=4, M=8 (§4)
inline constexpr const char* kDualPipeVP4M8 =
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
inline constexpr const char* kLoweredInterleaved1F1BP2 =
    "0UNSHARD,2UNSHARD,0F0,0SEND_F0,2RECV_F0,0F1,0SEND_F1,2RECV_F1,2F0,2SEND_F0,2F1,2SEND_F1,2RECV_B0,"
    "0F2,0SEND_F2,2B0,2SEND_B0,2RECV_B1,0F3,0SEND_F3,2RECV_F2,2B1,2SEND_B1,0RECV_B0,2F2,2SEND_F2,"
    "2RECV_F3,0B0,0RECV_B1,2F3,2SEND_F3,0B1,2RECV_B2,2B2,2SEND_B2,2RECV_B3,2B3,2SEND_B3,2REDUCE_GRAD,"
    "2RESHARD,0RECV_B2,0B2,0RECV_B3,0B3,0REDUCE_GRAD,0RESHARD\r\n"
    "1UNSHARD,3UNSHARD,1RECV_F0,1F0,1SEND_F0,1RECV_F1,1F1,1SEND_F1,3RECV_F0,3F0,3RECV_F1,3B0,3SEND_B0,"
    "1RECV_F2,3F1,1RECV_B0,3B1,3SEND_B1,1RECV_F3,1F2,1SEND_F2,1RECV_B1,1B0,1SEND_B0,3RECV_F2,1F3,"
    "1SEND_F3,1B1,1SEND_B1,3RECV_F3,3F2,3B2,3SEND_B2,1RECV_B2,3F3,3B3,3SEND_B3,1RECV_B3,3REDUCE_GRAD,"
    "3RESHARD,1B2,1SEND_B2,1B3,1SEND_B3,1REDUCE_GRAD,1RESHARD\r\n";
// Interleaved1F1B P=2, v=2, M=4 as PyTorch 2.15 lowers it (_PipelineScheduleRuntime,
// compute_comms): 2.11's cells plus a wait for every send and reduction (WAIT_SEND_F after the
// backward that consumed the forward, the other sends' waits at the end, WAIT_REDUCE_GRAD)
inline constexpr const char* kLoweredInterleaved1F1BP2Torch215 =
    "0UNSHARD,2UNSHARD,0F0,0SEND_F0,2RECV_F0,0F1,0SEND_F1,2RECV_F1,2F0,2SEND_F0,2F1,2SEND_F1,"
    "2RECV_B0,0F2,0SEND_F2,2B0,2WAIT_SEND_F0,2SEND_B0,2RECV_B1,0F3,0SEND_F3,2RECV_F2,2B1,"
    "2WAIT_SEND_F1,2SEND_B1,0RECV_B0,2F2,2SEND_F2,2RECV_F3,0B0,0WAIT_SEND_F0,0RECV_B1,2F3,2SEND_F3,"
    "0B1,0WAIT_SEND_F1,2RECV_B2,2B2,2WAIT_SEND_F2,2SEND_B2,2RECV_B3,2B3,2WAIT_SEND_F3,2SEND_B3,"
    "2REDUCE_GRAD,2WAIT_REDUCE_GRAD,2RESHARD,0RECV_B2,0B2,0WAIT_SEND_F2,0RECV_B3,0B3,0WAIT_SEND_F3,"
    "0REDUCE_GRAD,0WAIT_REDUCE_GRAD,0RESHARD,2WAIT_SEND_B0,2WAIT_SEND_B1,2WAIT_SEND_B2,2WAIT_SEND_B3\r\n"
    "1UNSHARD,3UNSHARD,1RECV_F0,1F0,1SEND_F0,1RECV_F1,1F1,1SEND_F1,3RECV_F0,3F0,3RECV_F1,3B0,"
    "3SEND_B0,1RECV_F2,3F1,1RECV_B0,3B1,3SEND_B1,1RECV_F3,1F2,1SEND_F2,1RECV_B1,1B0,1WAIT_SEND_F0,"
    "1SEND_B0,3RECV_F2,1F3,1SEND_F3,1B1,1WAIT_SEND_F1,1SEND_B1,3RECV_F3,3F2,3B2,3SEND_B2,1RECV_B2,"
    "3F3,3B3,3SEND_B3,1RECV_B3,3REDUCE_GRAD,3WAIT_REDUCE_GRAD,3RESHARD,1B2,1WAIT_SEND_F2,1SEND_B2,"
    "1B3,1WAIT_SEND_F3,1SEND_B3,1REDUCE_GRAD,1WAIT_REDUCE_GRAD,1RESHARD,3WAIT_SEND_B0,3WAIT_SEND_B1,"
    "1WAIT_SEND_B0,1WAIT_SEND_B1,3WAIT_SEND_B2,3WAIT_SEND_B3,1WAIT_SEND_B2,1WAIT_SEND_B3\r\n";
// DualPipeV P=2, M=4 lowered: compute_comms (§5.4)
inline constexpr const char* kLoweredDualPipeVP2 =
    "0UNSHARD,3UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,3RECV_F0,0F2,0SEND_F2,3F0,3RECV_F1,3I0,3SEND_B0,3W0,3F1,"
    "3RECV_F2,0RECV_B0,(0F3;3B1)OVERLAP_F_B,0SEND_F3,3SEND_B1,(3F2;0B0)OVERLAP_F_B,3RECV_F3,0RECV_B1,3B2,"
    "3SEND_B2,(3F3;0B1)OVERLAP_F_B,0RECV_B2,3B3,3SEND_B3,3REDUCE_GRAD,0RECV_B3,3RESHARD,0I2,0W2,0I3,0W3,"
    "0REDUCE_GRAD,0RESHARD\r\n"
    "1UNSHARD,2UNSHARD,1RECV_F0,1F0,1RECV_F1,2F0,2SEND_F0,1RECV_F2,1F1,2F1,2SEND_F1,2RECV_B0,1F2,2B0,"
    "(2F2;1B0)OVERLAP_F_B,2SEND_F2,1SEND_B0,1RECV_F3,2RECV_B1,(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,"
    "2SEND_F3,1SEND_B1,2RECV_B2,2B2,1B2,1SEND_B2,2RECV_B3,2I3,1I3,1SEND_B3,2W3,2REDUCE_GRAD,2RESHARD,1W3,"
    "1REDUCE_GRAD,1RESHARD\r\n";

inline std::vector<Instruction> actions(const std::vector<const char*>& texts) {
    std::vector<Instruction> program;
    for (const char* text : texts) program.push_back(parseAction(text).value());
    return program;
}

// Two devices with checkpointing, a split backward, and the data-parallel tail.
inline Plan handMadePlan() {
    Plan plan;
    plan.stages = {StageSpec{0, 0, {}, {}}, StageSpec{1, 1, {}, {}}};
    plan.devices = {
        {0, actions({"0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0R0", "0B0", "0RECV_B1", "0I1", "0W1",
                     "0REDUCE_GRAD", "0OPT"})},
        {1, actions({"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1", "1B1", "1SEND_B1"})},
    };
    return plan;
}

inline std::string exported(const Plan& plan, PipeliningCsvOptions options = {PipeliningCsvFormat::ComputeOnly, true}) {
    auto csv = toPipeliningCsv(plan, options);
    EXPECT_TRUE(csv.ok()) << csv.error().message;
    return csv.ok() ? *csv : std::string{};
}

// The CLI's default: recomputation is refused unless dropped on purpose.
inline constexpr PipeliningCsvOptions kRefuseRecompute{PipeliningCsvFormat::ComputeOnly, false};

inline std::string exportError(const Plan& plan, PipeliningCsvOptions options = kRefuseRecompute) {
    auto csv = toPipeliningCsv(plan, options);
    EXPECT_FALSE(csv.ok());
    return csv.ok() ? std::string{} : csv.error().message;
}

inline PipeliningCsv parsed(std::string_view text) {
    auto csv = parsePipeliningCsv(text);
    EXPECT_TRUE(csv.ok()) << csv.error().message;
    return csv.ok() ? *csv : PipeliningCsv{};
}

inline std::string parseError(std::string_view text) {
    auto csv = parsePipeliningCsv(text);
    EXPECT_FALSE(csv.ok());
    return csv.ok() ? std::string{} : csv.error().message;
}

inline std::optional<ImportedPipeliningPlan> imported(std::string_view text) {
    auto plan = importPipeliningCsv(parsed(text), "test");
    EXPECT_TRUE(plan.ok()) << plan.error().message;
    if (!plan) return std::nullopt;
    return std::move(*plan);
}

inline std::string importError(std::string_view text) {
    auto plan = importPipeliningCsv(parsed(text), "test");
    EXPECT_FALSE(plan.ok());
    return plan.ok() ? std::string{} : plan.error().message;
}

inline std::vector<int> stageDevices(const Plan& plan) {
    std::vector<int> devices;
    for (const auto& stage : plan.stages) devices.push_back(stage.device);
    return devices;
}

// Per device, its computations with a micro-batch (F, R, B, I, W) in program order.
inline Programs computeOrderOf(const Plan& plan) {
    Programs order;
    for (const auto& device : plan.devices) {
        auto& program = order.emplace_back();
        for (const auto& ins : device.program)
            if (isCompute(ins.op) && hasMicrobatch(ins.op)) program.push_back(ins);
    }
    return order;
}

// Valid, and simulates to the end; returns the makespan.
inline double runsCleanly(const Plan& plan) {
    const auto report = Validator::validate(plan);
    EXPECT_TRUE(report.ok()) << report.summary();
    auto sim = Simulator::run(plan);
    EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().message);
    if (!sim) return 0;
    EXPECT_FALSE(sim->deadlocked);
    return sim->makespan_ms;
}

inline bool hasNoteStartingWith(const ImportedPipeliningPlan& plan, const std::string& start) {
    return std::any_of(plan.notes.begin(), plan.notes.end(),
                       [&](const std::string& n) { return n.rfind(start, 0) == 0; });
}

}  // namespace mario::csvtest
