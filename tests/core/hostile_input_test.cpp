// One test per hostile input that used to crash a program or exhaust a machine: each ends in
// one line naming the file, the JSON path and the allowed range.
#include <gtest/gtest.h>

#include <fstream>

#include "core/io/ConfigJson.h"
#include "core/io/JsonFile.h"
#include "core/io/PlanJson.h"
#include "core/model/Limits.h"
#include "core/session/InputFile.h"
#include "core/session/PlanBuilder.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleFiles.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/common/ScratchDir.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

using nlohmann::json;

const PresetLibrary kPresets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");

std::string writeTemp(const test::ScratchDir& dir, const std::string& name, const std::string& text) {
    const std::string path = dir.file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

json figure2() {
    return json::parse(R"({"format": "mario-config", "version": 1, "devices": 4,
        "parallel": {"scheme": "1f1b", "pp": 4, "dp": 1, "tp": 1, "micro_batch_size": 1, "global_batch_size": 4},
        "unit_costs": {"forward": 1, "backward": 2, "recompute": 1, "activation_bytes": 1000, "checkpoint_bytes": 10},
        "microbatches": 4})");
}

TEST(HostileInput, ANumberBeyondDoubleIsOneLineNotAnAbort) {
    // nlohmann throws out_of_range (not parse_error) for 1e999: it used to escape every program.
    const test::ScratchDir dir("hostile_input");
    const std::string path = writeTemp(dir, "version.mario.json", R"({"format": "mario-plan", "version": 1e999})");
    auto read = readJsonFile(path);
    ASSERT_FALSE(read.ok());
    // Line 1, the number's last character (column 41), as every other error is placed.
    EXPECT_EQ(read.error().message, path + ":1:41: malformed JSON: number overflow parsing '1e999'");
    auto input = loadInputFile(path, kPresets);
    ASSERT_FALSE(input.ok());
    EXPECT_EQ(input.error().message, read.error().message);
}

TEST(HostileInput, CostsWhoseSumOverflowAreNamedNotSimulatedToInfinity) {
    json config = figure2();
    config["unit_costs"]["forward"] = 1.7e308;
    config["unit_costs"]["backward"] = 1.7e308;
    auto read = readConfig(config, kPresets);
    ASSERT_TRUE(read.ok()) << read.error().message;  // each number is finite and allowed
    auto plan = buildPlan(*read);
    ASSERT_TRUE(plan.ok());
    auto sim = Simulator::run(*plan);
    ASSERT_FALSE(sim.ok()) << "makespan " << sim->makespan_ms;
    EXPECT_EQ(sim.error().message,
              "stages[0].forward_ms: 1.7e+308 makes the step's times or memory overflow (not a finite number)");
}

TEST(HostileInput, AnOverflowNamesTheCostThatOverflowed) {
    // Interleaved zero-bubble, 2 devices × 2 chunks, 4 micro-batches: each device runs 8 Is and
    // 8 Ws and 2 OPTs, so any two of one cost at 1.7e308 overflow. The split backward's and the
    // optimizer's costs used to be missing from the names, and the overflow was blamed on
    // activation_bytes (issue 30).
    struct Case {
        const char* field;
        void (*set)(StageCost&);
    };
    const Case cases[] = {
        {"backward_weight_ms", [](StageCost& c) { c.backward_weight_ms = 1.7e308; }},
        {"backward_input_ms", [](StageCost& c) { c.backward_input_ms = 1.7e308; }},
        {"weight_grad_bytes", [](StageCost& c) { c.weight_grad_bytes = 1.7e308; }},
        {"optimizer_ms", [](StageCost& c) { c.optimizer_ms = 1.7e308; }},
    };
    for (const Case& one : cases) {
        Plan plan = test::unitPlan(Scheme::InterleavedZb, 2, 4, 2);
        for (auto& stage : plan.stages) one.set(stage.cost);
        auto sim = Simulator::run(plan);
        ASSERT_FALSE(sim.ok()) << one.field << ": makespan " << sim->makespan_ms;
        EXPECT_EQ(sim.error().message,
                  std::string("stages[0].") + one.field +
                      ": 1.7e+308 makes the step's times or memory overflow (not a finite number)");
    }
}

// What a config's overflow says, through the session as mario simulate and the window take it:
// opening the config (the validator) and preparing its schedule (the simulator, the window's base
// simulation first). The check is handed the config's names; nothing rewrites its line after.
void expectRefusal(const json& document, const std::string& expected) {
    SCOPED_TRACE(expected);
    const OpenedSchedule opened = openConfigDocument(document, kPresets, {}, "huge.config.json");
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.error, "huge.config.json: " + expected);
    auto config = readConfig(document, kPresets);
    ASSERT_TRUE(config.ok()) << config.error().message;  // each number is finite and allowed
    auto plan = buildPlan(*config);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    ScheduleInput input;
    input.config = *config;
    input.source = std::move(*plan);
    for (const PrepareOptions& options : {PrepareOptions{}, PrepareOptions{.simulate_base = true}}) {
        auto prepared = prepareSchedule(input, options);
        ASSERT_FALSE(prepared.ok());
        EXPECT_EQ(prepared.error().message, expected);
    }
}

TEST(HostileInput, AConfigsOverflowIsNamedByTheKeyTheUserWrote) {
    // Figure 2's 1F1B, 4 devices × 4 micro-batches: device 0 runs four Bs of 1e308 ms, and at
    // the end of its warm-up it holds four micro-batches' activations of 1e308 bytes. Each sum
    // passes the largest double (1.8e308); the largest cost is the one set, named by its key.
    const char* tail = " makes the step's times or memory overflow (not a finite number)";
    json backward = figure2();
    backward["unit_costs"]["backward"] = 1e308;
    expectRefusal(backward, std::string("unit_costs.backward: 1e+308") + tail);
    json activations = figure2();
    activations["unit_costs"]["activation_bytes"] = 1e308;
    expectRefusal(activations, std::string("unit_costs.activation_bytes: 1e+308") + tail);
}

TEST(HostileInput, AnAnalyticalConfigsOverflowNamesTheRateThatCausedIt) {
    // LLaMA-2 13B on 8 stages of 5 layers: the last one adds the output head (a 5120 × 32000
    // product), so its backward is the longest cost; at 1e-302 TFLOP/s it takes about 4e306 ms,
    // and 32 of them overflow. The line names the stage, the field and the key that was absurd.
    const json config = json::parse(R"({"format": "mario-config", "version": 1, "devices": 8, "microbatches": 32,
        "model": {"layers": 40, "hidden": 5120, "heads": 40, "ffn_hidden": 13824, "vocab": 32000,
                  "sequence_length": 4096, "gated_mlp": true},
        "hardware": {"peak_tflops": 1e-302, "memory_gb": 80, "hbm_gb_per_s": 2039, "intra_node_gb_per_s": 300,
                     "inter_node_gb_per_s": 25},
        "parallel": {"scheme": "1f1b", "pp": 8, "dp": 1, "tp": 1, "micro_batch_size": 1, "global_batch_size": 32}})");
    const OpenedSchedule opened = openConfigDocument(config, kPresets, {}, "slow.config.json");
    ASSERT_FALSE(opened.ok());
    const std::string named =
        "slow.config.json: stage 7's backward_ms (from model and hardware, at hardware.peak_tflops 1e-302 and "
        "hardware.hbm_gb_per_s 2039): ";
    EXPECT_EQ(opened.error.substr(0, named.size()), named) << opened.error;
    EXPECT_TRUE(opened.error.ends_with(" makes the step's times or memory overflow (not a finite number)"))
        << opened.error;
    EXPECT_EQ(opened.error.find('\n'), std::string::npos);
}

TEST(HostileInput, WeightGradBytesAboveTheActivationsAreRefusedLikeCheckpointBytes) {
    // I frees activation_bytes − weight_grad_bytes: 3000 of 1000 made each I add 2000 bytes, and
    // a device's peak tripled, where the same excess in checkpoint_bytes was refused.
    json plan = writePlan(test::unitPlan(Scheme::ZbH1, 2, 2));
    ASSERT_EQ(plan["stages"][1]["activation_bytes"], 1000);
    plan["stages"][1]["weight_grad_bytes"] = 3000;
    auto read = readPlan(plan);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "stages[1].weight_grad_bytes: 3000 is larger than activation_bytes 1000 (W keeps "
                                    "part of the activations, and I frees the rest)");
    plan["stages"][1]["weight_grad_bytes"] = 1000;  // all of it: I frees nothing, W all
    read = readPlan(plan);
    EXPECT_TRUE(read.ok()) << read.error().message;
}

// `chains` single-stage chains on one device, chain c running F and B of its own micro-batch c
// (the validator's rule: no micro-batch in two chains).
json singleStageChains(int chains) {
    json plan = {{"format", "mario-plan"}, {"version", 1}};
    json stages = json::array(), pipelines = json::array(), program = json::array();
    for (int c = 0; c < chains; ++c) {
        stages.push_back({{"index", c}, {"device", 0}, {"forward_ms", 1}, {"backward_ms", 2}});
        pipelines.push_back(json::array({c}));
        program.push_back(std::to_string(c) + "F" + std::to_string(c));
        program.push_back(std::to_string(c) + "B" + std::to_string(c));
    }
    plan["stages"] = stages;
    plan["pipelines"] = pipelines;
    plan["devices"] = json::array({{{"index", 0}, {"program", program}}});
    return plan;
}

TEST(HostileInput, ManyChainsMeetTheDocumentedPairLimitNotAValidationHint) {
    // The simulator's tables are stages × micro-batches: n single-stage chains make n² pairs for
    // 2n instructions, within 64 per instruction plus 2^20 up to n = 1090 (docs/limits.md).
    auto fits = readPlan(singleStageChains(1024));
    ASSERT_TRUE(fits.ok()) << fits.error().message;
    EXPECT_EQ(test::simulate(*fits).makespan_ms, 1024 * (1 + 2));  // one device, one F and B each
    // 4096 chains: a valid plan, once refused as if it were not ("validate it first").
    auto many = readPlan(singleStageChains(4096), {.validate = false});
    ASSERT_TRUE(many.ok()) << many.error().message;
    EXPECT_TRUE(Validator::checkStructure(*many).empty());
    auto sim = Simulator::run(*many);
    ASSERT_FALSE(sim.ok());
    EXPECT_EQ(sim.error().message, "the plan's 4096 micro-batches on 4096 stages make 16777216 (stage, micro-batch) "
                                   "pairs; the limit is 64 per instruction plus 1048576, 1572864 for its 8192 "
                                   "instructions");
}

// `chains` single-stage chains on one device, chain c running F, R and B of micro-batch
// `number(c)`: 1 ms forward and recompute, 2 ms backward, 10 bytes of activations of which a
// checkpoint keeps 4.
json recomputingChains(int chains, int (*number)(int)) {
    json plan = singleStageChains(chains);
    json program = json::array();
    for (int c = 0; c < chains; ++c) {
        plan["stages"][c]["recompute_ms"] = 1;
        plan["stages"][c]["activation_bytes"] = 10;
        plan["stages"][c]["checkpoint_bytes"] = 4;
        const std::string m = std::to_string(number(c));
        for (const char* op : {"F", "R", "B"}) program.push_back(std::to_string(c) + op + m);
    }
    plan["devices"][0]["program"] = program;
    return plan;
}

TEST(HostileInput, SparseMicrobatchNumbersAreTimedAsDenseOnes) {
    // The simulator addresses micro-batches by their own numbers while stages × (largest + 1)
    // stays within the pair limit, and numbers them densely beyond it (sim/SimulationTables.cpp):
    // 1024 chains numbered 1, 3, …, 2047 make 1024 × 2048 pairs, over the 1,245,184 allowed for
    // 3072 instructions; numbered 0 … 1023, 1024². Both are one plan. By hand: each chain takes
    // 1 + 1 + 2 ms; a checkpointed F keeps 4 bytes, its R adds 6, B frees 10, so the peak is 10
    // (16 if the R's forward were not seen as checkpointed); the critical chain is the F, then
    // the R, then the B: 4 ms (3 without the R).
    for (auto number : {+[](int c) { return c; }, +[](int c) { return 2 * c + 1; }}) {
        auto plan = readPlan(recomputingChains(1024, number), {.validate = false});
        ASSERT_TRUE(plan.ok()) << plan.error().message;
        auto sim = Simulator::run(*plan);
        ASSERT_TRUE(sim.ok()) << sim.error().message;
        EXPECT_EQ(sim->makespan_ms, 1024 * (1 + 1 + 2));
        EXPECT_EQ(sim->recompute_ms, 1024);
        EXPECT_EQ(sim->devices[0].peak_dynamic_bytes, 10);
        EXPECT_EQ(sim->critical_chain_ms, 4);
    }
}

TEST(HostileInput, SizeProductsCannotOverflowOrDivideByZero) {
    // dp 65536 × micro_batch_size 65536 wrapped to 0 and divided by it (SIGFPE).
    json config = figure2();
    config.erase("devices");
    config.erase("microbatches");
    config["parallel"]["dp"] = 16384;
    config["parallel"]["micro_batch_size"] = 65536;
    auto read = readConfig(config, kPresets);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message,
              "parallel.global_batch_size: 4 is not divisible by dp * micro_batch_size = 1073741824");
    config["parallel"]["dp"] = 65536;
    read = readConfig(config, kPresets);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "parallel: pp * dp * tp = 262144 devices; the limit is 65536");
    ParallelConfig p;
    p.dp = 65536;
    p.micro_batch_size = 65536;
    p.global_batch_size = 4;
    EXPECT_EQ(p.microbatches(), 0);
}

TEST(HostileInput, MicrobatchCountsBeyondTheLimitAreRefusedBeforeAnyWork) {
    // 10^8 micro-batches grew the window past 12 GB before this check.
    json config = figure2();
    config["microbatches"] = 100000000;
    auto read = readConfig(config, kPresets);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "microbatches: expected an integer in [1, 16384] (got 100000000)");
    // The same limit guards configs built in memory (the window's settings, the tuner).
    config["microbatches"] = 4;
    auto ok = readConfig(config, kPresets);
    ASSERT_TRUE(ok.ok());
    Config huge = *ok;
    huge.microbatches = limits::kMaxMicrobatches + 1;
    auto plan = buildPlan(huge);
    ASSERT_FALSE(plan.ok());
    EXPECT_NE(plan.error().message.find("the limit is 16384"), std::string::npos) << plan.error().message;
}

TEST(HostileInput, StageIndicesAboveTwoToTheThirtyTwoAreNotTruncated) {
    json plan = writePlan(test::unitPlan(Scheme::OneFOneB, 4, 4));
    plan["pipelines"] = json::array({json::array({0, 1, 2, 4294967299ULL})});  // used to read as stage 3
    auto read = readPlan(plan);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "pipelines[0][3]: expected a stage index in [0, 65535]");
    plan = writePlan(test::unitPlan(Scheme::OneFOneB, 4, 4));
    plan["stages"][0]["layers"] = json::array({0, 4294967298ULL});
    read = readPlan(plan);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().message.find("stages[0].layers"), std::string::npos) << read.error().message;
}

TEST(HostileInput, APlanWithoutItsFormatSaysSo) {
    json plan = writePlan(test::unitPlan(Scheme::OneFOneB, 2, 2));
    plan.erase("format");
    const test::ScratchDir dir("hostile_input");
    const std::string path = writeTemp(dir, "noformat.mario.json", plan.dump());
    auto input = loadInputFile(path, kPresets);
    ASSERT_FALSE(input.ok());
    EXPECT_EQ(input.error().message, path + ": format: required (\"mario-plan\" for a plan with stages and device "
                                            "programs, \"mario-config\" for a config)");
}

TEST(HostileInput, TheValidatorStaysSmallOnASparseBrokenPlan) {
    // 2000 stages on 2 devices, and 20000 forwards each of a different micro-batch on stage 0:
    // every micro-batch skips 1999 stages. Dense stages × micro-batches tables took gigabytes
    // and a string per missing pair; the report now stops at its first problems.
    Plan plan;
    for (int s = 0; s < 2000; ++s) plan.stages.push_back({s, s % 2, {}, std::nullopt});
    plan.devices = {{0, {}}, {1, {}}};
    for (int m = 0; m < 20000; ++m) plan.devices[0].program.push_back({Op::Forward, 0, m});
    const auto issues = Validator::checkStructure(plan);
    ASSERT_FALSE(issues.empty());
    EXPECT_LE(issues.size(), 101u);
    EXPECT_EQ(issues.back().message, "the check stopped after the first 100 problems");
    EXPECT_EQ(issues.front().text(), "devices[0].program: 0B0 is missing on device 0");
}

}  // namespace
}  // namespace mario
