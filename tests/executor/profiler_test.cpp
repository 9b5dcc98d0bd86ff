// mario-executor profile (issue 5): the profile it writes is one core's ProfileCostModel reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "core/cost/ProfileCostModel.h"
#include "executor/Profiler.h"
#include "tests/executor/RunCli.h"

TEST(Profiler, FitLineRecoversALine) {
    auto f = mario::exec::fitLine({1, 2, 3, 4}, {3, 5, 7, 9});
    EXPECT_NEAR(f.a, 2, 1e-12);
    EXPECT_NEAR(f.b, 1, 1e-12);
    EXPECT_NEAR(f.r2, 1, 1e-12);
    auto flat = mario::exec::fitLine({1, 2, 3}, {5, 4, 3});  // negative slope: clamped
    EXPECT_EQ(flat.a, 0);
    EXPECT_NEAR(flat.b, 4, 1e-12);
}

TEST(Profiler, TinyThreeBlocksWritesALoadableProfile) {
    const auto path = std::filesystem::temp_directory_path() / "mario_profiler_tiny.profile.json";
    int code = 0;
    const std::string out =
        mario::test::runExecutorCli("profile --model tiny --max-blocks 3 --repeats 3 -o " + path.string(), code);
    ASSERT_EQ(code, 0) << out;
    auto summary = nlohmann::json::parse(out);
    EXPECT_EQ(summary["blocks"], 3);

    auto loaded = mario::ProfileCostModel::load(path.string());
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->microBatchSize(), 1);
    EXPECT_EQ(loaded->sequenceLength(), 16);

    nlohmann::json doc;
    std::ifstream(path) >> doc;
    EXPECT_EQ(doc["format"], "mario-profile");
    EXPECT_EQ(doc["version"], 1);
    EXPECT_NE(doc["notes"].get<std::string>().find("CPU"), std::string::npos);
    EXPECT_NE(doc["notes"].get<std::string>().find("--max-blocks 3"), std::string::npos);
    EXPECT_GT(doc["forward_ms"]["a"].get<double>(), 0);
    // The split backward is measured too, and the loaded profile hands it to every stage.
    EXPECT_GE(doc["backward_input_ms"]["a"].get<double>(), 0);
    EXPECT_GE(doc["backward_weight_ms"]["a"].get<double>(), 0);
    for (const auto& point : doc["source"]["points"]) {
        EXPECT_GT(point["backward_input_ms"].get<double>(), 0);
        EXPECT_GT(point["backward_weight_ms"].get<double>(), 0);
    }
    EXPECT_GT(doc["activation_bytes"]["a"].get<double>(), 0);
    // Static bytes are exact: 12 tensors per block, 12h^2 + 13h parameters, 32 bytes each.
    const double h = 32;
    EXPECT_NEAR(doc["static_bytes"]["a"].get<double>(), (12 * h * h + 13 * h) * 32, 1e-6);
    EXPECT_NEAR(doc["static_bytes"]["b"].get<double>(), 0, 1e-6);
    EXPECT_EQ(doc["send_bytes"].get<double>(), 16 * 32 * 8);
    const auto& points = doc["source"]["points"];
    ASSERT_EQ(points.size(), 3u);
    // Timing, so only loosely: three blocks take longer than one, and so hold more activations.
    EXPECT_GE(points[2]["forward_ms"].get<double>(), points[0]["forward_ms"].get<double>());
    EXPECT_GT(points[2]["activation_bytes"].get<double>(), points[0]["activation_bytes"].get<double>());
    std::filesystem::remove(path);
}

TEST(Profiler, ApiRejectsBadOptions) {
    mario::exec::ProfileOptions options;
    options.max_blocks = 0;
    EXPECT_FALSE(mario::exec::profileModel(options));
}

TEST(Profiler, BadArgumentsExitTwoWithOneLine) {
    for (const std::string args : {"profile --model tiny", "profile --model nonsense=3 -o x.json",
                                   "profile --max-blocks 0 -o /tmp/x.profile.json", "profile --frobnicate"}) {
        int code = 0;
        const std::string out = mario::test::runExecutorCli(args, code);
        EXPECT_EQ(code, 2) << args << ": " << out;
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << args << ": " << out;
        EXPECT_EQ(out.rfind("mario-executor profile: ", 0), 0u) << out;
    }
}
