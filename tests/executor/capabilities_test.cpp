// `mario-executor capabilities` (issue 14, item 6): one JSON line in the format of
// core/io/ExecutorCapabilities.h, and a line that tells the truth: where it says "no CUDA" a
// cuda run is refused, with a reason given; where it says CUDA, the run measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "core/io/ExecutorCapabilities.h"
#include "core/io/LiveEvents.h"
#include "core/io/PlanJson.h"
#include "core/util/ExitCode.h"
#include "tests/common/ScratchDir.h"
#include "tests/common/UnitPlans.h"
#include "tests/executor/RunCli.h"

namespace {

TEST(Capabilities, OneJsonLineInTheOwnersFormat) {
    for (const char* command : {"capabilities", "--capabilities"}) {
        int code = -1;
        const std::string out = mario::test::runExecutorCli(command, code);
        EXPECT_EQ(code, mario::kOk) << out;
        // The answer is the last line (LibTorch may warn before it) and the only JSON one.
        std::string last = out.substr(0, out.find_last_not_of('\n') + 1);
        last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
        auto caps = mario::parseExecutorCapabilities(last);
        ASSERT_TRUE(caps.ok()) << out << (caps ? "" : caps.error().message);
        EXPECT_FALSE(caps->version.empty());
        EXPECT_FALSE(caps->torch.empty());
        EXPECT_EQ(caps->protocol, mario::kLiveEventProtocol);
        EXPECT_GE(caps->devices, 0);
        // Partitions need CUDA; every missing capability says why.
        EXPECT_TRUE(!caps->partition_sms || caps->cuda);
        EXPECT_EQ(caps->cuda_reason.empty(), caps->cuda) << caps->cuda_reason;
        EXPECT_EQ(caps->partition_reason.empty(), caps->partition_sms) << caps->partition_reason;
        // Both reasons blame the same thing: Debian's CPU-only LibTorch, or (a PyTorch wheel's
        // CUDA LibTorch on a machine without a GPU) the missing GPU. The CUDA reason blamed
        // Debian's build on the wheel's too.
        if (!caps->cuda) {
            EXPECT_EQ(caps->cuda_reason.find("Debian") != std::string::npos,
                      caps->partition_reason.find("Debian") != std::string::npos)
                << caps->cuda_reason << " | " << caps->partition_reason;
        }
    }
}

TEST(Capabilities, TakesNoOptions) {
    int code = -1;
    const std::string out = mario::test::runExecutorCli("capabilities --verbose", code);
    EXPECT_EQ(code, mario::kBadInput);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find("takes no options"), std::string::npos) << out;
}

TEST(Capabilities, WhatItSaysOfCudaIsWhatARunDoes) {
    int code = -1;
    std::string out = mario::test::runExecutorCli("capabilities 2>/dev/null", code);
    out = out.substr(0, out.find_last_not_of('\n') + 1);
    auto caps =
        mario::parseExecutorCapabilities(out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1));
    ASSERT_TRUE(caps.ok());
    const mario::test::ScratchDir dir("capabilities");
    const std::string path = dir.file("cuda.mario.json");
    ASSERT_TRUE(mario::writePlanFile(*mario::test::makeUnitPlan(mario::Scheme::OneFOneB, 2, 2), path));
    const std::string run = mario::test::runExecutorCli("run " + path + " --backend cuda", code);
    if (caps->cuda) {
        EXPECT_EQ(code, mario::kOk) << run;
    } else {  // a CPU build (Debian's LibTorch, CI): refused in one line naming CUDA
        EXPECT_EQ(code, mario::kRunFailed) << run;
        EXPECT_NE(run.find("CUDA"), std::string::npos) << run;
        EXPECT_FALSE(caps->partition_sms);
    }
}

}  // namespace
