// Hand edits: a valid move re-times the plan, an invalid one is refused with the dependency
// it would break, and compute instructions carry their own SEND/RECV along.
#include <gtest/gtest.h>

#include "core/session/PlanEdit.h"
#include "core/sim/Simulator.h"
#include "tests/common/ProgramLookup.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using test::indexOf;

TEST(PlanEdit, ForwardMovesWithItsRecvAndSend) {
    // 1F1B, 4 devices: device 1 runs F0 F1 F2 B0 F3 ...; moving F3 before B0 keeps the plan
    // valid (it is exactly what prepose-forward does) and its RECV_F/SEND_F come along.
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 4);
    const int f3 = indexOf(plan, 1, "1F3");
    const int recvB0 = indexOf(plan, 1, "1RECV_B0");
    auto edited = moveInstruction(plan, {1, f3, recvB0});
    ASSERT_TRUE(edited.ok()) << edited.error().message;
    const auto& program = edited->plan.devices[1].program;
    EXPECT_EQ(toActionString(program[edited->new_index - 1]), "1RECV_F3");
    EXPECT_EQ(toActionString(program[edited->new_index]), "1F3");
    EXPECT_EQ(toActionString(program[edited->new_index + 1]), "1SEND_F3");
    EXPECT_EQ(toActionString(program[edited->new_index + 2]), "1RECV_B0");
    EXPECT_EQ(program.size(), plan.devices[1].program.size());
    // Device 1 keeps four activation sets alive now instead of three.
    EXPECT_DOUBLE_EQ(Simulator::run(edited->plan)->devices[1].peak_dynamic_bytes, 4000);
}

TEST(PlanEdit, MovingABackwardBeforeItsForwardIsRefusedWithTheReason) {
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    auto edited = moveInstruction(plan, {0, indexOf(plan, 0, "0B1"), 0});
    ASSERT_FALSE(edited.ok());
    EXPECT_NE(edited.error().message.find("moving 0B1 on device 0 is refused"), std::string::npos)
        << edited.error().message;
    EXPECT_NE(edited.error().message.find("0B1 comes before 0F1"), std::string::npos) << edited.error().message;
}

TEST(PlanEdit, AMoveThatDeadlocksNamesTheBlockedDevices) {
    // Device 0 first waits for B0's gradient before sending F1 (valid: device 1 runs F0 B0
    // first). If device 1 then wants F1 before B0, each waits for the other.
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    auto first = moveInstruction(plan, {0, indexOf(plan, 0, "0B0"), indexOf(plan, 0, "0F1")});
    ASSERT_TRUE(first.ok()) << first.error().message;
    auto second = moveInstruction(first->plan, {1, indexOf(first->plan, 1, "1F1"), indexOf(first->plan, 1, "1B0")});
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().message.find("deadlock: device 0 blocked at 0RECV_B0"), std::string::npos)
        << second.error().message;
}

TEST(PlanEdit, DroppingOntoItselfChangesNothing) {
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    const int f1 = indexOf(plan, 1, "1F1");
    auto edited = moveInstruction(plan, {1, f1, f1});
    ASSERT_TRUE(edited.ok());
    EXPECT_EQ(edited->new_index, f1);
    EXPECT_EQ(edited->plan.devices[1].program, plan.devices[1].program);
}

TEST(PlanEdit, CommunicationCannotBeDraggedAlone) {
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    auto edited = moveInstruction(plan, {1, indexOf(plan, 1, "1RECV_F0"), 5});
    ASSERT_FALSE(edited.ok());
    EXPECT_EQ(edited.error().message, "1RECV_F0 is communication; move its compute instead");
}

}  // namespace
}  // namespace mario
