// What of the GPU modes (docs/gpu.md) can be checked on any machine: the options are refused
// with one line where they cannot apply, and every pipeline device gets its own memory account
// (DeviceMemoryBook), which the CPU backend reports as the CUDA backend does.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "core/io/PlanJson.h"
#include "core/util/ExitCode.h"
#include "executor/Executor.h"
#include "tests/common/ScratchDir.h"
#include "tests/common/UnitPlans.h"
#include "tests/executor/RunCli.h"

namespace {

// Parameters of one GPT block of hidden h: four h×h attention matrices and two h×4h MLP
// matrices (12h²), their biases (4h + 4h + h = 9h) and two layer norms (4h): 12h² + 13h.
double blockParameters(double h) { return 12 * h * h + 13 * h; }

void expectOneLine(const std::string& out, int code, int expectedCode, const std::string& fragment) {
    EXPECT_EQ(code, expectedCode) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find(fragment), std::string::npos) << out;
}

TEST(GpuMode, EveryDeviceReportsItsOwnPeakOnTheCpu) {
    const mario::Plan plan = *mario::test::makeUnitPlan(mario::Scheme::OneFOneB, 4, 4);
    mario::exec::ExecutorOptions options;
    options.iterations = 2;  // the second step starts with gradients and Adam moments in place
    options.adam = true;
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report) << report.error().message;
    ASSERT_EQ(report->peak_allocated_bytes.size(), 4u);
    // 8 blocks over 4 devices: 2 each, float64, and in the second step each holds weights,
    // gradients and two Adam moments of them: at least 4 × 8 bytes per parameter.
    const double statics = 2 * blockParameters(32) * 8 * 4;
    for (std::size_t d = 0; d < 4; ++d) EXPECT_GE(report->peak_allocated_bytes[d], statics) << "device " << d;
}

TEST(GpuMode, PartitionsNeedTheCudaBackend) {
    const mario::test::ScratchDir dir("gpu_mode");
    const std::string path = dir.file("plan.mario.json");
    ASSERT_TRUE(mario::writePlanFile(*mario::test::makeUnitPlan(mario::Scheme::OneFOneB, 2, 2), path));
    int code = 0;
    std::string out = mario::test::runExecutorCli("run " + path + " --backend cpu --partition-sms", code);
    // `run`'s usage errors are the reason, then the usage line.
    EXPECT_EQ(code, mario::kBadInput) << out;
    EXPECT_EQ(out.rfind("mario-executor: --partition-sms needs --backend cuda", 0), 0u) << out;
}

TEST(GpuMode, ThroughTheApiTheCpuIsRefusedToo) {
    mario::exec::ExecutorOptions options;
    options.partition_sms = true;
    auto report = mario::exec::runPlan(*mario::test::makeUnitPlan(mario::Scheme::OneFOneB, 2, 2), options);
    ASSERT_FALSE(report);
    EXPECT_NE(report.error().message.find("--partition-sms needs --backend cuda"), std::string::npos)
        << report.error().message;
}

TEST(GpuMode, PartitionedProfilesNeedAGpuAndAPositiveCount) {
    const mario::test::ScratchDir dir("gpu_mode");
    const std::filesystem::path out = dir.file("partitioned.profile.json");
    int code = 0;
    std::string text = mario::test::runExecutorCli("profile --model tiny --partition-sms 2 -o " + out.string(), code);
    expectOneLine(text, code, mario::kBadInput, "--partition-sms needs --device cuda");
    text = mario::test::runExecutorCli("profile --model tiny --partition-sms -1 -o " + out.string(), code);
    expectOneLine(text, code, mario::kBadInput, "--partition-sms: expected an integer in [1, 1024]");
    EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
