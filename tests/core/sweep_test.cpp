// The sweep engine (core/sweep) against `mario simulate`'s own path run on a config file edited
// by hand: the same step, throughput, MFU and peaks for every point; refusals kept with the
// words the file would get; the parsers' one-line errors; cancel.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleFiles.h"
#include "core/sim/MemoryFit.h"
#include "core/sweep/Sweep.h"
#include "core/sweep/SvgLineChart.h"
#include "core/sweep/SweepExport.h"

namespace mario {
namespace {

const PresetLibrary kPresets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");

// GPT-3 1.6B (32 layers) on four A100-40G in a pipeline, as a user writes it: preset names.
nlohmann::json baseDocument() {
    return {{"format", "mario-config"},
            {"version", 1},
            {"name", "sweep test"},
            {"model", "gpt3-1.6b"},
            {"hardware", "a100-40g"},
            {"memory_limit_gb", 20},
            {"parallel", {{"scheme", "1f1b"}, {"pp", 4}, {"micro_batch_size", 1}, {"global_batch_size", 16}}},
            {"passes", "none"}};
}

Config read(const nlohmann::json& document) {
    auto config = readConfig(document, kPresets);
    EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
    return *config;
}

// What `mario simulate FILE --json` reports of a config file: the file is written and opened
// by openSchedule, the path of the CLI, and simulated with the file's own passes.
struct Simulated {
    std::string error;
    SimResult result;
    MemoryFit fit;
};

Simulated simulateFile(const nlohmann::json& document) {
    const std::string path = ::testing::TempDir() + "sweep_point.config.json";
    std::ofstream(path) << document.dump(1);
    Simulated out;
    OpenedSchedule opened = openSchedule(path, kPresets);
    if (!opened.ok()) {
        out.error = opened.error;
        return out;
    }
    auto prepared = prepareSchedule(opened.input);
    if (!prepared) {
        out.error = prepared.error().message;
        return out;
    }
    out.result = prepared->result;
    out.fit = memoryFit(prepared->result, prepared->plan.info);
    return out;
}

void expectSame(const SweepPoint& point, const Simulated& file, const std::string& what) {
    ASSERT_TRUE(file.error.empty()) << what << ": " << file.error;
    ASSERT_TRUE(point.ok()) << what << ": " << point.refusal;
    EXPECT_DOUBLE_EQ(point.step_ms, file.result.makespan_ms) << what;
    EXPECT_DOUBLE_EQ(point.samples_per_s, file.result.samples_per_s) << what;
    EXPECT_DOUBLE_EQ(point.tokens_per_s, file.result.tokens_per_s) << what;
    EXPECT_DOUBLE_EQ(point.mfu, file.result.flops.mfu) << what;
    ASSERT_EQ(point.device_peak_bytes.size(), file.result.devices.size()) << what;
    for (std::size_t d = 0; d < point.device_peak_bytes.size(); ++d)
        EXPECT_DOUBLE_EQ(point.device_peak_bytes[d], file.result.devices[d].peak_bytes) << what << " device " << d;
    EXPECT_EQ(point.fits, std::optional<bool>(file.fit.fits())) << what;
    EXPECT_EQ(point.fullest_device, file.fit.fullest_device) << what;
}

TEST(Sweep, EveryPointEqualsSimulateOfTheConfigEditedByHand) {
    SweepSpec spec;
    spec.base = read(baseDocument());
    spec.knobs = {*parseVary("micro_batch_size=1,2,4")};
    spec.schemes = *parseSchemeChoices("1f1b,interleaved:2,gpipe");
    spec.pass_sets = *parsePassSets("none;all;checkpoint,overlap");
    spec.threads = 2;
    auto result = runSweep(spec);
    ASSERT_TRUE(result.ok()) << result.error().message;
    ASSERT_EQ(result->points.size(), 3u * 3 * 3);
    int fitting = 0, over = 0;
    for (int v = 0; v < 3; ++v)
        for (int s = 0; s < 3; ++s)
            for (int p = 0; p < 3; ++p) {
                // The hand edit: the three fields a user would change in the file.
                nlohmann::json document = baseDocument();
                document["parallel"]["micro_batch_size"] = 1 << v;
                document["parallel"]["scheme"] = std::vector<std::string>{"1f1b", "interleaved", "gpipe"}[s];
                if (s == 1) document["parallel"]["chunks"] = 2;
                document["passes"] = std::vector<nlohmann::json>{"none", "all",
                                                                 nlohmann::json::array({"checkpoint", "overlap"})}[p];
                const SweepPoint& point = result->points[result->indexOf(v, 0, s, p)];
                EXPECT_EQ(point.values[0].number, 1 << v);
                expectSame(point, simulateFile(document), document["parallel"].dump() + " " + document["passes"].dump());
                fitting += point.fitsMemory();
                over += point.ok() && !point.fitsMemory();
            }
    // The grid straddles the 20 GB limit, so both verdicts were compared.
    EXPECT_GT(fitting, 0);
    EXPECT_GT(over, 0);
}

// Sweeps the base over `vary` (two values a knob) and checks every point against the file a user
// would write by hand: `edit(v1, v2, document)` applies the point's values to the base document.
SweepResult expectPointsEqualHandEdits(const std::vector<std::string>& vary,
                                       const std::function<void(int, int, nlohmann::json&)>& edit) {
    SweepSpec spec;
    spec.base = read(baseDocument());
    for (const std::string& knob : vary) spec.knobs.push_back(*parseVary(knob));
    auto result = runSweep(spec);
    EXPECT_TRUE(result.ok()) << result.error().message;
    if (!result.ok()) return {};
    const int second = vary.size() > 1 ? 2 : 1;
    EXPECT_EQ(result->points.size(), std::size_t(2 * second));
    for (int v1 = 0; v1 < 2; ++v1)
        for (int v2 = 0; v2 < second; ++v2) {
            nlohmann::json document = baseDocument();
            edit(v1, v2, document);
            expectSame(result->points[result->indexOf(v1, v2, 0, 0)], simulateFile(document),
                       vary[0] + " value " + std::to_string(v1) + ", second knob value " + std::to_string(v2));
        }
    return *result;
}

TEST(Sweep, TwoKnobsAndTheWidthKnobEqualTheirHandEdits) {
    // model.hidden keeps the head size (2048 / 16 = 128): a hand edit changes the heads too.
    expectPointsEqualHandEdits({"model.hidden=1024,3072", "training.attention=flash,materialized"},
                               [](int v1, int v2, nlohmann::json& document) {
                                   const int hidden = v1 == 0 ? 1024 : 3072;
                                   nlohmann::json model;
                                   std::ifstream(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles/models/gpt3-1.6b.json") >>
                                       model;
                                   for (const char* key : {"format", "version", "notes"}) model.erase(key);
                                   model["hidden"] = hidden;
                                   model["heads"] = hidden / 128;
                                   model["kv_heads"] = hidden / 128;
                                   model["ffn_hidden"] = 4 * hidden;
                                   document["model"] = model;
                                   document["training"] = {{"attention", v2 == 0 ? "flash" : "materialized"}};
                               });
}

// The host-time and send knobs (docs/cost-model.md#host-time) set the training keys a user would
// write: every point equals its hand-edited file.
TEST(Sweep, HostAndSendKnobsEqualTheirHandEdits) {
    const SweepResult result = expectPointsEqualHandEdits(
        {"training.overlap_p2p_comm=true,false", "host_op_us=1,400"}, [](int v1, int v2, nlohmann::json& document) {
            document["training"]["overlap_p2p_comm"] = v1 == 0;
            document["training"]["host_op_us"] = v2 == 0 ? 1 : 400;
        });
    // A host of 400 us an operator paces this model's small blocks: the knob is not inert.
    ASSERT_EQ(result.points.size(), 4u);
    EXPECT_GT(result.points[result.indexOf(0, 1, 0, 0)].step_ms, result.points[result.indexOf(0, 0, 0, 0)].step_ms);
    expectPointsEqualHandEdits({"framework=megatron,deepspeed"}, [](int v, int, nlohmann::json& document) {
        document["training"]["framework"] = v == 0 ? "megatron" : "deepspeed";
    });
}

TEST(Sweep, RefusedPointsKeepTheReasonTheFileWouldGet) {
    SweepSpec spec;
    spec.base = read(baseDocument());
    // 2 layers cannot fill 4 stages; 3 does not divide the global batch of 16; 8 is fine.
    spec.knobs = {*parseVary("layers=2,8"), *parseVary("micro_batch_size=3,4")};
    auto result = runSweep(spec);
    ASSERT_TRUE(result.ok());
    for (int v1 = 0; v1 < 2; ++v1)
        for (int v2 = 0; v2 < 2; ++v2) {
            nlohmann::json document = baseDocument();
            nlohmann::json model;
            std::ifstream(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles/models/gpt3-1.6b.json") >> model;
            for (const char* key : {"format", "version", "notes"}) model.erase(key);
            model["layers"] = v1 == 0 ? 2 : 8;
            document["model"] = model;
            document["parallel"]["micro_batch_size"] = v2 == 0 ? 3 : 4;
            const Simulated file = simulateFile(document);
            const SweepPoint& point = result->points[result->indexOf(v1, v2, 0, 0)];
            if (v1 == 1 && v2 == 1) {
                expectSame(point, file, "layers 8, mbs 4");
                continue;
            }
            ASSERT_FALSE(file.error.empty());
            EXPECT_TRUE(point.evaluated);
            // The file's error is "PATH: <reason>"; the point keeps the reason.
            EXPECT_EQ(point.refusal, file.error.substr(file.error.find(": ") + 2));
        }
    EXPECT_NE(result->points[result->indexOf(0, 1, 0, 0)].refusal.find("model.layers"), std::string::npos);
    EXPECT_NE(result->points[result->indexOf(1, 0, 0, 0)].refusal.find("global_batch_size"), std::string::npos);
    // The JSON rows keep them too.
    const nlohmann::json rows = sweepJson(*result);
    EXPECT_EQ(rows["points"][0]["refusal"], result->points[0].refusal);
    EXPECT_TRUE(rows["points"][3]["refusal"].is_null());
}

// A refused point belongs to its pass set's series like any other: its CSV and JSON rows name
// the passes that were asked for (the window's CSV said "none" for every refused point).
TEST(Sweep, RefusedPointsKeepTheirPassSet) {
    SweepSpec spec;
    spec.base = read(baseDocument());
    spec.knobs = {*parseVary("micro_batch_size=3")};  // 3 does not divide the global batch of 16
    spec.pass_sets = *parsePassSets("none;checkpoint,overlap");
    auto result = runSweep(spec);
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(result->points.size(), 2u);
    const nlohmann::json rows = sweepJson(*result);
    EXPECT_EQ(rows["points"][0]["passes"], nlohmann::json::array());
    EXPECT_EQ(rows["points"][1]["passes"], nlohmann::json({"checkpoint", "overlap"}));
    const std::string csv = sweepCsv(*result);
    EXPECT_NE(csv.find(",\"checkpoint,overlap\","), std::string::npos) << csv;
    EXPECT_FALSE(result->points[1].ok());
}

TEST(Sweep, CancelStopsHandingOutPoints) {
    SweepSpec spec;
    spec.base = read(baseDocument());
    spec.knobs = {*parseVary("global_batch_size=16:400:16")};  // 25 points
    spec.threads = 1;
    std::atomic<bool> cancel{false};
    int seen = 0;
    auto result = runSweep(
        spec,
        [&](const SweepProgress& progress, const SweepPoint&) {
            seen = progress.done;
            EXPECT_EQ(progress.total, 25);
            if (progress.done == 3) cancel = true;
        },
        &cancel);
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result->cancelled);
    EXPECT_EQ(seen, 3);
    int evaluated = 0;
    for (const SweepPoint& point : result->points) {
        evaluated += point.evaluated;
        if (!point.evaluated) {
            EXPECT_EQ(point.refusal, "cancelled");
        }
    }
    EXPECT_EQ(evaluated, 3);
    // Every point keeps its coordinates, evaluated or not.
    EXPECT_EQ(result->points.back().values[0].number, 400);
}

TEST(Sweep, ThreadCountDoesNotChangeTheResult) {
    SweepSpec spec;
    spec.base = read(baseDocument());
    spec.knobs = {*parseVary("sequence_length=1024,2048,4096")};
    spec.pass_sets = *parsePassSets("none;all");
    spec.threads = 1;
    auto one = runSweep(spec);
    spec.threads = 3;
    auto three = runSweep(spec);
    ASSERT_TRUE(one.ok() && three.ok());
    EXPECT_EQ(sweepCsv(*one), sweepCsv(*three));
}

// The chart a CLI user opens: a refused point breaks the line in two (two "M" moves, three
// segments' worth of points drawn), its reason is a hover title with its markup escaped, and the
// limit is a dashed line at its height.
TEST(SvgLineChart, GapsSplitTheLineAndKeepTheirReason) {
    SvgLineChart chart;
    chart.x = {1, 2, 3, 4};
    chart.limit = 40;
    chart.limit_label = "memory limit";
    SvgSeries series;
    series.label = "1f1b <none>";
    series.y = {10, 20, std::nullopt, 30};
    series.notes = {"", "", "refused: a & b < c", ""};
    chart.series = {series};
    const std::string svg = renderSvgLineChart(chart, 700, 400);
    const std::size_t path = svg.find("<path d=\" M");
    ASSERT_NE(path, std::string::npos);
    const std::string d = svg.substr(path, svg.find('"', path + 9) - path);
    int moves = 0, lines = 0;
    for (char c : d) {
        moves += c == 'M';
        lines += c == 'L';
    }
    EXPECT_EQ(moves, 2);  // 10 → 20, then 30 alone
    EXPECT_EQ(lines, 1);
    EXPECT_NE(svg.find("<title>refused: a &amp; b &lt; c</title>"), std::string::npos);
    EXPECT_NE(svg.find("1f1b &lt;none&gt;"), std::string::npos);
    EXPECT_NE(svg.find("stroke-dasharray=\"6 4\""), std::string::npos);  // the limit
    EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(SweepSpec, BadInputIsOneLineNamingWhatIsWrong) {
    auto unknown = parseVary("micro_batch=1,2");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("unknown knob \"micro_batch\""), std::string::npos);
    EXPECT_NE(unknown.error().message.find("parallel.micro_batch_size"), std::string::npos);  // the valid ones
    EXPECT_EQ(unknown.error().message.find('\n'), std::string::npos);
    EXPECT_FALSE(parseVary("micro_batch_size").ok());
    EXPECT_FALSE(parseVary("micro_batch_size=1,2.5").ok());
    EXPECT_FALSE(parseVary("micro_batch_size=0").ok());
    EXPECT_FALSE(parseVary("micro_batch_size=8:2").ok());
    EXPECT_FALSE(parseVary("memory_limit_gb=10:40").ok());  // a number's range needs its step
    EXPECT_FALSE(parseVary("attention=fast").ok());
    EXPECT_FALSE(parseVary("micro_batch_size=1:100000000").ok());  // over kMaxSweepPoints
    EXPECT_FALSE(parseSchemeChoices("1f1b:2").ok());               // 1f1b takes no chunks
    EXPECT_FALSE(parseSchemeChoices("interleaved:1").ok());
    EXPECT_FALSE(parsePassSets("none;bogus").ok());
}

TEST(SweepSpec, RangesAndListsReadAsWritten) {
    auto range = parseVary("parallel.micro_batch_size=2:10:4");
    ASSERT_TRUE(range.ok());
    EXPECT_EQ(range->knob->key, "parallel.micro_batch_size");
    ASSERT_EQ(range->values.size(), 3u);  // 2, 6, 10
    EXPECT_EQ(range->values[2].number, 10);
    auto limits = parseVary("memory_limit_gb=20:40:10");
    ASSERT_TRUE(limits.ok());
    EXPECT_EQ(limits->values.size(), 3u);
    auto words = parseVary("recompute=none,full");
    ASSERT_TRUE(words.ok());
    EXPECT_EQ(words->values[1].word, "full");
    auto schemes = parseSchemeChoices("1f1b, interleaved:4");
    ASSERT_TRUE(schemes.ok());
    EXPECT_EQ((*schemes)[1].chunks, 4);
    EXPECT_EQ((*schemes)[1].label(), "interleaved:4");
    auto sets = parsePassSets("none;all");
    ASSERT_TRUE(sets.ok());
    EXPECT_TRUE((*sets)[0].empty());
    EXPECT_EQ(passSetLabel((*sets)[1]), "all");
}

}  // namespace
}  // namespace mario
