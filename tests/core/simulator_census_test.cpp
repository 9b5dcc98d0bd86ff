// Before any table is indexed, Simulator::run takes a census of every program's operands
// (sim/SimulationTables.cpp: four instructions a step with AVX2 where the processor has it, the
// last one to three one by one) and refuses a plan with an operand out of range. Each test puts
// one bad operand at every place of a program, so that it falls in every lane of a step and in
// the tail, and expects the refusal the rule itself gives; and puts operands that are in range
// (REDUCE_GRAD's and OPT's micro-batch numbers, the largest stage and micro-batch) everywhere and
// expects a simulation.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "tests/core/TestPlans.h"

namespace mario {
namespace {

Plan base() { return test::unitPlan(Scheme::OneFOneB, 2, 5); }  // device 1 has 21 instructions: 5 steps and a tail

// Every place of device 1's program in turn, with `change` applied to the instruction there;
// `refused` says whether the changed plan must be refused.
template <class Change, class Refused>
void atEveryPlace(Change change, Refused refused, const std::string& what) {
    const Plan plan = base();
    const std::size_t length = plan.devices[1].program.size();
    ASSERT_GE(length, 9u);
    for (std::size_t place = 0; place < length; ++place) {
        Plan changed = plan;
        Instruction& ins = changed.devices[1].program[place];
        change(ins);
        const auto result = Simulator::run(changed);
        if (refused(ins)) {
            ASSERT_FALSE(result.ok()) << what << " at program[" << place << "] was simulated";
            EXPECT_NE(result.error().message.find("devices[1].program[" + std::to_string(place) + "]"),
                      std::string::npos)
                << what << ": " << result.error().message;
        } else {
            EXPECT_TRUE(result.ok()) << what << " at program[" << place
                                     << "]: " << (result.ok() ? "" : result.error().message);
        }
    }
}

TEST(SimulatorCensus, AStageOutOfRangeIsRefusedInEveryLaneAndTheTail) {
    const int stages = static_cast<int>(base().stages.size());
    for (int stage : {-1, stages, 1 << 30, -(1 << 30)})
        atEveryPlace([stage](Instruction& ins) { ins.stage = stage; }, [](const Instruction&) { return true; },
                     "stage " + std::to_string(stage));
}

TEST(SimulatorCensus, ANegativeMicrobatchIsRefusedWhereTheKindHasOne) {
    for (int microbatch : {-1, -7, -(1 << 30)})
        atEveryPlace([microbatch](Instruction& ins) { ins.microbatch = microbatch; },
                     [](const Instruction& ins) { return hasMicrobatch(ins.op); },
                     "micro-batch " + std::to_string(microbatch));
}

// Of any kind: REDUCE_GRAD's and OPT's numbers count towards Plan::microbatchCount too.
TEST(SimulatorCensus, AMicrobatchBeyondTheInstructionCountIsRefused) {
    const int limit = static_cast<int>(base().instructionCount());
    atEveryPlace([limit](Instruction& ins) { ins.microbatch = limit; }, [](const Instruction&) { return true; },
                 "micro-batch " + std::to_string(limit));
}

// The REDUCE_GRAD and OPT of the unit plan carry -1; any number of theirs below the instruction
// count is taken (it counts towards Plan::microbatchCount), and a negative one is no error.
TEST(SimulatorCensus, OperandsInRangeAreTakenAnywhere) {
    const int limit = static_cast<int>(base().instructionCount());
    atEveryPlace(
        [limit](Instruction& ins) {
            if (!hasMicrobatch(ins.op)) ins.microbatch = limit - 1;
        },
        [](const Instruction&) { return false; }, "REDUCE_GRAD or OPT numbered");
    Plan plan = base();
    for (auto& device : plan.devices)
        for (Instruction& ins : device.program)
            if (!hasMicrobatch(ins.op)) ins.microbatch = -5;
    EXPECT_TRUE(Simulator::run(plan).ok());
}

}  // namespace
}  // namespace mario
