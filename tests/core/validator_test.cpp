// Bad plans get precise words: what is wrong and where (JSON path), and deadlocks name each
// blocked device, the instruction it is stuck on and what it waits for.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/io/PlanJson.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/common/ScratchDir.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

std::vector<Instruction>& programOf(Plan& plan, int device) { return plan.devices[device].program; }

void erase(Plan& plan, int device, const std::string& action) {
    auto& program = programOf(plan, device);
    const Instruction target = *parseAction(action);
    auto it = std::find(program.begin(), program.end(), target);
    ASSERT_NE(it, program.end()) << action;
    program.erase(it);
}

TEST(ActionStrings, RoundTripEveryKind) {
    for (const char* text :
         {"0F0", "12B7", "3R2", "1I0", "1W0", "0SEND_F4", "1RECV_F4", "2SEND_B9", "1RECV_B9", "5REDUCE_GRAD", "5OPT"}) {
        auto parsed = parseAction(text);
        ASSERT_TRUE(parsed.ok()) << text;
        EXPECT_EQ(toActionString(*parsed), text);
    }
    EXPECT_EQ(parseAction("1Q3").error().message, "unknown instruction \"1Q3\"");
    EXPECT_FALSE(parseAction("F3").ok());
    EXPECT_FALSE(parseAction("1F").ok());
    EXPECT_FALSE(parseAction("1OPT3").ok());
    EXPECT_FALSE(parseAction("1F-2").ok());
}

TEST(Validator, GeneratedPlansOfEverySchemeAreValid) {
    for (auto [scheme, chunks] : {std::pair{Scheme::GPipe, 1}, std::pair{Scheme::OneFOneB, 1},
                                  std::pair{Scheme::Interleaved, 2}, std::pair{Scheme::Chimera, 1}}) {
        const Plan plan = test::unitPlan(scheme, 4, 8, chunks);
        EXPECT_TRUE(Validator::validate(plan).ok())
            << schemeName(scheme) << ": " << Validator::validate(plan).summary();
    }
}

TEST(Validator, MissingRecvIsNamedWithItsPath) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    erase(plan, 1, "1RECV_F1");
    const ValidationReport report = Validator::validate(plan);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.summary().find("missing 1RECV_F1"), std::string::npos) << report.summary();
    EXPECT_NE(report.summary().find("devices[1].program["), std::string::npos) << report.summary();
}

TEST(Validator, SendWithoutRecvIsReported) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    erase(plan, 0, "0RECV_B0");
    const ValidationReport report = Validator::validate(plan);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.summary().find("0RECV_B0"), std::string::npos) << report.summary();
}

TEST(Validator, RecomputeOutsideItsForwardAndBackwardIsRefused) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    programOf(plan, 0).insert(programOf(plan, 0).begin(), *parseAction("0R1"));
    const ValidationReport report = Validator::validate(plan);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.issues.front().path, "devices[0].program[0]");
    EXPECT_NE(report.issues.front().message.find("0R1 must stand after 0F1"), std::string::npos);
}

TEST(Validator, InstructionOnTheWrongDeviceIsRefused) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 1);
    programOf(plan, 0).push_back(*parseAction("1OPT"));
    const ValidationReport report = Validator::validate(plan);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.summary().find("belongs to stage 1 on device 1, not device 0"), std::string::npos)
        << report.summary();
}

TEST(Validator, MissingBackwardIsReported) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    erase(plan, 1, "1B1");
    erase(plan, 1, "1SEND_B1");
    erase(plan, 0, "0RECV_B1");
    const auto issues = Validator::validate(plan).issues;
    EXPECT_TRUE(std::any_of(issues.begin(), issues.end(), [](const PlanIssue& issue) {
        return issue.message == "1B1 is missing on device 1";
    })) << Validator::validate(plan).summary();
}

TEST(Validator, HandMadeDeadlockNamesEachBlockedDeviceAndWhatItWaitsFor) {
    // Device 0 waits for the gradient before sending the activation that produces it.
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 1);
    auto& program = programOf(plan, 0);  // 0F0 0SEND_F0 0RECV_B0 0B0 0OPT
    std::swap(program[1], program[2]);   // 0F0 0RECV_B0 0SEND_F0 ...
    const ValidationReport report = Validator::validate(plan);
    EXPECT_TRUE(report.issues.empty());
    ASSERT_EQ(report.deadlock.size(), 2u);
    EXPECT_EQ(report.deadlock[0].device, 0);
    EXPECT_EQ(toActionString(report.deadlock[0].instruction), "0RECV_B0");
    EXPECT_EQ(report.deadlock[0].waits_for, "1SEND_B0 from device 1, which is stuck earlier at 1RECV_F0");
    EXPECT_EQ(report.deadlock[1].device, 1);
    EXPECT_EQ(toActionString(report.deadlock[1].instruction), "1RECV_F0");
    EXPECT_EQ(report.deadlock[1].waits_for, "0SEND_F0 from device 0, which is stuck earlier at 0RECV_B0");
    EXPECT_EQ(report.summary().rfind("deadlock: device 0 blocked at 0RECV_B0", 0), 0u) << report.summary();
}

TEST(Validator, OptimizerStepMustFollowEveryBackwardOfItsStage) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 2);
    auto& program = programOf(plan, 1);  // ... 1B1 1SEND_B1 1OPT
    const Instruction optimizer = program.back();
    program.pop_back();
    program.insert(program.begin(), optimizer);
    const ValidationReport report = Validator::validate(plan);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.issues.front().text(),
              "devices[1].program[0]: \"1OPT\" comes before 1B1, a backward of its stage");
}

TEST(PlanFiles, UnknownInstructionNamesItsJsonPath) {
    nlohmann::json plan = writePlan(test::unitPlan(Scheme::OneFOneB, 2, 4));
    plan["devices"][1]["program"][7] = "1Q3";
    auto read = readPlan(plan);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "devices[1].program[7]: unknown instruction \"1Q3\"");
}

TEST(PlanFiles, WrongTypesAndMissingFieldsNameTheirPaths) {
    nlohmann::json plan = writePlan(test::unitPlan(Scheme::OneFOneB, 2, 2));
    nlohmann::json bad = plan;
    bad["stages"][1]["forward_ms"] = "fast";
    EXPECT_EQ(readPlan(bad).error().message, "stages[1].forward_ms: expected a number");
    bad = plan;
    bad["stages"][0].erase("backward_ms");
    EXPECT_EQ(readPlan(bad).error().message, "stages[0].backward_ms: required");
    bad = plan;
    bad["format"] = "something-else";
    EXPECT_EQ(readPlan(bad).error().message, "format: expected \"mario-plan\"");
    bad = plan;
    bad["stages"][0]["checkpoint_bytes"] = 1e9;
    EXPECT_NE(readPlan(bad).error().message.find("stages[0].checkpoint_bytes"), std::string::npos);
    bad = plan;
    bad["stages"][1]["device"] = 7;
    EXPECT_NE(readPlan(bad).error().message.find("stages[1].device: 7 is not one of the 2 devices"), std::string::npos)
        << readPlan(bad).error().message;
}

TEST(PlanFiles, MalformedJsonGivesLineAndColumn) {
    const test::ScratchDir dir("validator");
    const std::string path = dir.file("malformed.mario.json");
    std::ofstream(path) << "{\n  \"format\": \"mario-plan\",\n  \"version\": 1,,\n}\n";
    auto read = readPlanFile(path);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, path + ":3:16: malformed JSON: unexpected ','; expected string literal");
}

TEST(PlanFiles, TheDesignDocumentsMinimalExampleReadsAndSimulates) {
    const auto json = nlohmann::json::parse(R"({
      "format": "mario-plan", "version": 1, "pipelines": [[0, 1]],
      "link": {"latency_ms": 0.05, "bandwidth_gb_per_s": 0},
      "stages": [
        {"index": 0, "device": 0, "forward_ms": 1.0, "backward_ms": 2.0, "recompute_ms": 1.0,
         "activation_bytes": 1000, "checkpoint_bytes": 10, "static_bytes": 5000, "send_bytes": 10},
        {"index": 1, "device": 1, "forward_ms": 1.0, "backward_ms": 2.0, "recompute_ms": 1.0,
         "activation_bytes": 1000, "checkpoint_bytes": 10, "static_bytes": 5000, "send_bytes": 0}],
      "devices": [
        {"index": 0, "program": ["0F0", "0SEND_F0", "0RECV_B0", "0B0"]},
        {"index": 1, "program": ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]}]})");
    auto plan = readPlan(json);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    auto sim = Simulator::run(*plan);
    // F0 (1) + link (0.05) + F1 (1) + B1 (2) + link (0.05) + B0 (2)
    EXPECT_DOUBLE_EQ(sim->makespan_ms, 6.1);
    EXPECT_DOUBLE_EQ(sim->devices[0].peak_bytes, 6000);
}

}  // namespace
}  // namespace mario
