// mario-executor profile (issue 5): the profile it writes is one core's ProfileJson reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cost/ProfileCostModel.h"
#include "core/io/ProfileJson.h"
#include "executor/Profiler.h"
#include "tests/common/ScratchDir.h"
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
    const mario::test::ScratchDir dir("profiler");
    const std::filesystem::path path = dir.file("tiny.profile.json");
    int code = 0;
    const std::string out =
        mario::test::runExecutorCli("profile --model tiny --max-blocks 3 --repeats 3 -o " + path.string(), code);
    ASSERT_EQ(code, 0) << out;
    // stdout's summary is the one JSON line; stderr may add a warning per loose fit.
    std::istringstream lines(out);
    nlohmann::json summary;
    int warnings = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind('{', 0) == 0) summary = nlohmann::json::parse(line);
        else if (line.rfind("mario-executor profile: warning: the ", 0) == 0) ++warnings;
        else ADD_FAILURE() << "unexpected line: " << line;
    }
    EXPECT_EQ(summary["blocks"], 3);
    // Every fit's R², in the summary and in the profile; a warning for each below 0.99.
    const std::vector<std::string> fits{"forward_ms",         "backward_ms",       "backward_input_ms",
                                        "backward_weight_ms", "recompute_ms",      "optimizer_ms",
                                        "activation_bytes",   "weight_grad_bytes", "static_bytes"};
    ASSERT_EQ(summary["r2"].size(), fits.size()) << summary.dump();
    int below = 0;
    for (const auto& name : fits) {
        ASSERT_TRUE(summary["r2"].contains(name)) << name;
        const double r2 = summary["r2"][name].get<double>();
        EXPECT_LE(r2, 1.0 + 1e-12) << name;
        below += r2 < 0.99;
    }
    EXPECT_EQ(warnings, below);
    // Static bytes grow exactly linearly with the blocks.
    EXPECT_NEAR(summary["r2"]["static_bytes"].get<double>(), 1.0, 1e-12);

    auto loaded = mario::readProfileFile(path.string());
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->micro_batch_size, 1);
    EXPECT_EQ(loaded->sequence_length, 16);

    nlohmann::json doc;
    std::ifstream(path) >> doc;
    EXPECT_EQ(doc["source"]["r2"], summary["r2"]);
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
        EXPECT_GT(point["optimizer_ms"].get<double>(), 0);  // OPT was free in profiles before
    }
    // The optimizer step of the embedding's and the head's weights, and the loaded profile's
    // OPT cost for a stage of two blocks with the head: the fit plus the head's step.
    EXPECT_GT(doc["embedding"]["optimizer_ms"].get<double>(), 0);
    EXPECT_GT(doc["head"]["optimizer_ms"].get<double>(), 0);
    EXPECT_NE(doc["notes"].get<std::string>().find("SGD step"), std::string::npos);
    mario::Config config;
    config.model.sequence_length = 16;
    config.parallel.micro_batch_size = 1;
    auto costs = mario::ProfileCostModel(*loaded).stageCosts(config, {{0, 2, false, true}});
    ASSERT_TRUE(costs) << costs.error().message;
    const double fitted =
        std::max(0.0, doc["optimizer_ms"]["a"].get<double>() * 2 + doc["optimizer_ms"]["b"].get<double>());
    EXPECT_NEAR((*costs)[0].optimizer_ms, fitted + doc["head"]["optimizer_ms"].get<double>(), 1e-9);
    EXPECT_GT(doc["activation_bytes"]["a"].get<double>(), 0);
    // What I keeps until W grows with the blocks and is at most what the forward kept; the
    // transients are positive and reach the loaded stages (profile_memory_test checks both
    // against a run).
    EXPECT_GT(doc["weight_grad_bytes"]["a"].get<double>(), 0);
    EXPECT_GT(doc["working_bytes"].get<double>(), 0);
    EXPECT_GT(doc["head"]["working_bytes"].get<double>(), 0);
    // mario-executor's I keeps the graph W walks again: most of what the forward kept.
    for (const auto& point : doc["source"]["points"])
        EXPECT_GT(point["weight_grad_bytes"].get<double>(), point["activation_bytes"].get<double>() / 2);
    ASSERT_TRUE((*costs)[0].weight_grad_bytes.has_value());
    EXPECT_LE(*(*costs)[0].weight_grad_bytes, (*costs)[0].activation_bytes);
    EXPECT_DOUBLE_EQ((*costs)[0].working_bytes,
                     std::max(doc["working_bytes"].get<double>(), doc["head"]["working_bytes"].get<double>()));
    // Static bytes are exact: 12 tensors per block, 12h^2 + 13h parameters, each a float64
    // weight and its gradient under SGD (16 bytes; Adam adds two moments).
    const double h = 32;
    EXPECT_NEAR(doc["static_bytes"]["a"].get<double>(), (12 * h * h + 13 * h) * 16, 1e-6);
    EXPECT_NEAR(doc["static_bytes"]["b"].get<double>(), 0, 1e-6);
    EXPECT_EQ(doc["send_bytes"].get<double>(), 16 * 32 * 8);
    const auto& points = doc["source"]["points"];
    ASSERT_EQ(points.size(), 3u);
    // Timing, so only loosely: three blocks take longer than one, and so hold more activations.
    EXPECT_GE(points[2]["forward_ms"].get<double>(), points[0]["forward_ms"].get<double>());
    EXPECT_GT(points[2]["activation_bytes"].get<double>(), points[0]["activation_bytes"].get<double>());
}

// R² by hand: points (1,1), (2,3), (3,2): mean 2, line y = 0.5x + 1, residuals
// 0.5, −1, 0.5 (SSE 1.5) against a total spread of 2: R² = 1 − 1.5/2 = 0.25.
TEST(Profiler, FitLineReportsItsCoefficientOfDetermination) {
    auto f = mario::exec::fitLine({1, 2, 3}, {1, 3, 2});
    EXPECT_NEAR(f.a, 0.5, 1e-12);
    EXPECT_NEAR(f.b, 1.0, 1e-12);
    EXPECT_NEAR(f.r2, 0.25, 1e-12);
}

TEST(Profiler, WarnsOncePerFitBelowTheThreshold) {
    const std::vector<mario::exec::FitQuality> fits{
        {"forward_ms", 0.69}, {"backward_ms", 0.995}, {"static_bytes", 1.0}, {"recompute_ms", 0.985}};
    const auto lines = mario::exec::lowFitWarnings(fits);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind("the forward_ms fit has R² = 0.6900 (below 0.99)", 0), 0u) << lines[0];
    EXPECT_EQ(lines[1].rfind("the recompute_ms fit has R² = 0.9850 (below 0.99)", 0), 0u) << lines[1];
    EXPECT_TRUE(mario::exec::lowFitWarnings(fits, 0.5).empty());
}

TEST(Profiler, ApiRejectsBadOptions) {
    mario::exec::ProfileOptions options;
    options.max_blocks = 0;
    EXPECT_FALSE(mario::exec::profileModel(options));
    // The neighbours of a partitioned profile are some of the other partitions, never more.
    options.max_blocks = 1;
    options.partitions = 2;
    options.neighbours = 3;
    auto refused = mario::exec::profileModel(options);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("at most the other 1 partitions can be busy"), std::string::npos)
        << refused.error().message;
    // Fewer than all of them (contention at 1 of 3 busy) passes that check and reaches the next
    // one: partitions need a GPU.
    options.partitions = 4;
    options.neighbours = 1;
    EXPECT_EQ(options.busyNeighbours(), 1);
    auto onCpu = mario::exec::profileModel(options);
    ASSERT_FALSE(onCpu);
    EXPECT_NE(onCpu.error().message.find("--partition-sms needs --device cuda"), std::string::npos)
        << onCpu.error().message;
    options.neighbours = 0;
    EXPECT_EQ(options.busyNeighbours(), 3);  // by default every other partition
}

// --neighbours N: every block stage measured alone (the fits) and beside N busy threads; the
// contention is the busy time over the alone time of every timed phase, less one, per neighbour,
// recomputed here from the points the profile records.
TEST(Profiler, NeighboursGiveTheStagesTheirContentionWithTheFitsAlone) {
    mario::exec::ProfileOptions options;
    auto spec = mario::exec::parseModelSpec("tiny");
    ASSERT_TRUE(spec);
    options.model = *spec;
    options.max_blocks = 2;
    options.repeats = 3;
    options.neighbours = 1;
    auto result = mario::exec::profileModel(options);
    ASSERT_TRUE(result) << result.error().message;
    const nlohmann::json& doc = result->profile;
    const auto& alone = doc["source"]["points"];
    const auto& busy = doc["source"]["contention"]["busy_points"];
    ASSERT_EQ(alone.size(), 2u);
    ASSERT_EQ(busy.size(), 2u);
    EXPECT_EQ(doc["source"]["contention"]["neighbours"], 1);
    double aloneMs = 0, busyMs = 0;
    for (const char* phase :
         {"forward_ms", "backward_ms", "recompute_ms", "backward_input_ms", "backward_weight_ms", "optimizer_ms"})
        for (std::size_t i = 0; i < 2; ++i) {
            aloneMs += alone[i][phase].get<double>();
            busyMs += busy[i][phase].get<double>();
            EXPECT_GT(busy[i][phase].get<double>(), 0) << phase;
        }
    const double expected = std::max(0.0, busyMs / aloneMs - 1);
    EXPECT_NEAR(result->contention, expected, 1e-12);
    if (expected > 0) {
        EXPECT_NEAR(doc["contention"].get<double>(), expected, 1e-12);
    } else {
        EXPECT_FALSE(doc.contains("contention"));
    }
    EXPECT_NE(doc["notes"].get<std::string>().find("other threads ran the same blocks"), std::string::npos);
    // The fits are the alone points': two points, one line through both.
    const double f1 = alone[0]["forward_ms"].get<double>(), f2 = alone[1]["forward_ms"].get<double>();
    if (f2 >= f1) {
        EXPECT_NEAR(doc["forward_ms"]["a"].get<double>(), f2 - f1, 1e-9);
        EXPECT_NEAR(doc["forward_ms"]["b"].get<double>(), 2 * f1 - f2, 1e-9);
    } else {  // timing noise: a falling line is clamped flat at the mean (fitLine)
        EXPECT_EQ(doc["forward_ms"]["a"].get<double>(), 0);
        EXPECT_NEAR(doc["forward_ms"]["b"].get<double>(), (f1 + f2) / 2, 1e-9);
    }
    // Through core's reader and cost model to every stage of a plan.
    auto fits = mario::profileFromJson(doc, "");
    ASSERT_TRUE(fits) << fits.error().message;
    mario::Config config;
    config.model.sequence_length = 16;
    config.parallel.micro_batch_size = 1;
    auto costs = mario::ProfileCostModel(*fits).stageCosts(config, {{0, 1, true, false}, {1, 2, false, true}});
    ASSERT_TRUE(costs) << costs.error().message;
    for (const auto& cost : *costs) EXPECT_NEAR(cost.contention, expected, 1e-12);

    // The optimizer step of the largest stage, alone and beside the neighbour stepping too: its
    // contention is the ratio of the two medians the source records, and reaches every stage.
    const auto& step = doc["source"]["contention"]["optimizer_step"];
    const double stepAlone = step["alone_ms"].get<double>(), stepBeside = step["beside_ms"].get<double>();
    EXPECT_GT(stepAlone, 0);
    EXPECT_GT(stepBeside, 0);
    const double stepping = std::max(0.0, stepBeside / stepAlone - 1);
    ASSERT_TRUE(result->optimizer_contention);
    EXPECT_NEAR(*result->optimizer_contention, stepping, 1e-12);
    EXPECT_NEAR(doc["optimizer_contention"].get<double>(), stepping, 1e-12);
    for (const auto& cost : *costs) {
        ASSERT_TRUE(cost.optimizer_contention);
        EXPECT_NEAR(*cost.optimizer_contention, stepping, 1e-12);
    }
    // Without neighbours nothing is measured and nothing is written: the stage's contention applies.
    options.neighbours = 0;
    auto aloneOnly = mario::exec::profileModel(options);
    ASSERT_TRUE(aloneOnly) << aloneOnly.error().message;
    EXPECT_FALSE(aloneOnly->profile.contains("optimizer_contention"));
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
