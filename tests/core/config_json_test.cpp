// Config files (docs/config-format.md): what they mean, what errors they give (each naming its JSON
// path), and that writing then reading gives the same config back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassVocabulary.h"

namespace mario {
namespace {

using json = nlohmann::json;

const std::string kProfiles = std::string(MARIO_TEST_SOURCE_DIR) + "/profiles";

// The example from docs/config-format.md.
json designExample() {
    return json::parse(R"({
        "format": "mario-config", "version": 1,
        "model": "gpt3-13b", "hardware": "a100-40g",
        "devices": 32, "memory_limit_gb": 40,
        "parallel": {"scheme": "chimera", "pp": 32, "dp": 1, "tp": 1, "chunks": 1,
                     "micro_batch_size": 1, "global_batch_size": 64},
        "passes": ["checkpoint", "overlap", "redundancy", "prepose"]})");
}

Result<Config> read(const json& document) { return readConfig(document, PresetLibrary(kProfiles)); }

std::string errorOf(const json& document) {
    auto config = read(document);
    return config.ok() ? "(no error)" : config.error().message;
}

TEST(ConfigJson, ReadsTheDesignExample) {
    auto config = read(designExample());
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->model.name, "gpt3-13b");
    EXPECT_EQ(config->model.hidden, 5120);
    EXPECT_EQ(config->hardware.peak_tflops, 312);
    EXPECT_EQ(config->parallel.scheme, Scheme::Chimera);
    EXPECT_EQ(config->parallel.pp, 32);
    EXPECT_EQ(config->microbatchCount(), 64);
    ASSERT_TRUE(config->memory_limit_bytes.has_value());
    EXPECT_DOUBLE_EQ(*config->memory_limit_bytes, 40e9);
    EXPECT_EQ(config->passes, (std::vector<std::string>{"checkpoint", "overlap", "redundancy", "prepose"}));
    EXPECT_FALSE(config->unit_costs.has_value());
}

TEST(ConfigJson, UnknownSchemeSaysWhatIsExpected) {
    json doc = designExample();
    doc["parallel"]["scheme"] = "foo";
    EXPECT_EQ(errorOf(doc),
              "parallel.scheme: unknown scheme \"foo\" (expected gpipe, 1f1b, interleaved, chimera, bfs, zb-h1, zb-h2, "
              "interleaved-zb, zbv, dualpipev or dualpipe)");
}

TEST(ConfigJson, ErrorsNameTheirJsonPath) {
    struct Case {
        const char* what;
        json patch;  // merged into the design example
        const char* expectedStart;
    };
    const std::vector<Case> cases = {
        {"devices", {{"devices", 16}}, "devices: 16 devices do not match"},
        {"batch",
         {{"parallel", {{"global_batch_size", 63}, {"micro_batch_size", 2}, {"scheme", "1f1b"}}}},
         "parallel.global_batch_size: 63 is not divisible by dp * micro_batch_size = 2"},
        {"chimera pp", {{"devices", 31}, {"parallel", {{"pp", 31}}}}, "parallel.pp: chimera needs an even number"},
        {"chimera mb",
         {{"parallel", {{"global_batch_size", 62}, {"micro_batch_size", 2}}}},
         "parallel.global_batch_size: chimera needs an even number of micro-batches (got 31)"},
        {"chimera odd override",
         {{"microbatches", 5}},
         "microbatches: chimera needs an even number of micro-batches (got 5)"},
        {"interleaved chunks",
         {{"parallel", {{"scheme", "interleaved"}}}},
         "parallel.chunks: interleaved needs chunks >= 2"},
        {"interleaved group",
         {{"parallel", {{"scheme", "interleaved"}, {"chunks", 2}, {"pp", 8}, {"dp", 4}, {"global_batch_size", 40}}}},
         "parallel.global_batch_size: 10 micro-batches are not divisible by the interleaved group size 8"},
        {"chunks without interleaving",
         {{"parallel", {{"chunks", 2}}}},
         "parallel.chunks: only interleaved, bfs and interleaved-zb use chunks"},
        {"layers",
         {{"devices", 64}, {"parallel", {{"pp", 64}}}},
         "model.layers: 40 layers cannot fill the 64 stages of a chimera pipeline on 64 devices"},
        {"pass", {{"passes", {"checkpoint", "fast"}}}, "passes[1]: unknown pass \"fast\""},
        {"pp zero", {{"parallel", {{"pp", 0}}}}, "parallel.pp: expected an integer in [1, 1024] (got 0)"},
        {"pp fraction", {{"parallel", {{"pp", 2.5}}}}, "parallel.pp: expected an integer in [1, 1024] (got 2.5)"},
        {"memory", {{"memory_limit_gb", -1}}, "memory_limit_gb: expected a positive number (got -1)"},
        {"model name", {{"model", "gpt5"}}, "model: unknown model preset \"gpt5\" (known: gpt3-1.6b, gpt3-13b"},
        {"hardware type", {{"hardware", {{"peak_tflops", "fast"}}}}, "hardware.peak_tflops: expected a number"},
        {"typo", {{"parallel", {{"micro_batch", 2}}}}, "parallel.micro_batch: unknown key"},
        {"version", {{"version", 2}}, "version: unsupported version 2"},
        {"format", {{"format", "mario-plan"}}, "format: expected \"mario-config\""},
        {"tp", {{"devices", 96}, {"parallel", {{"tp", 3}}}}, "parallel.tp: 40 heads are not divisible by tp = 3"},
        {"profile", {{"profile", "missing.profile.json"}}, "profile: "},
        {"profile sequence",
         {{"model", "llama2-13b"}, {"profile", "example-gpt-small.profile.json"}},
         "profile: measured at sequence length 2048 but model.sequence_length is 4096"},
    };
    for (const Case& c : cases) {
        json doc = designExample();
        doc.merge_patch(c.patch);
        std::string message = errorOf(doc);
        EXPECT_EQ(message.rfind(c.expectedStart, 0), 0u) << c.what << ": " << message;
    }
}

TEST(ConfigJson, UnitModeNeedsNoModelOrHardware) {
    auto config = read(json::parse(R"({"format": "mario-config", "version": 1,
        "parallel": {"scheme": "1f1b", "pp": 4}, "microbatches": 4,
        "unit_costs": {"forward": 1, "backward": 2, "recompute": 1}})"));
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->model.name, "unit");
    EXPECT_EQ(config->hardware.name, "unit");
    ASSERT_TRUE(config->unit_costs.has_value());
    EXPECT_EQ(config->unit_costs->backward, 2);
    EXPECT_EQ(config->unit_costs->activation_bytes, 1000);  // the default stays
    EXPECT_EQ(config->microbatchCount(), 4);
    EXPECT_EQ(config->parallel.global_batch_size, 4);

    // Without unit costs both are required.
    std::string message = errorOf(json::parse(R"({"parallel": {"scheme": "1f1b", "pp": 4}, "microbatches": 4})"));
    EXPECT_EQ(message, "model: required (a preset name or an object)");
}

TEST(ConfigJson, PassListsAcceptAllNoneAndLongNames) {
    json doc = designExample();
    doc["passes"] = "all";
    EXPECT_EQ(read(doc)->passes.size(), 4u);
    doc["passes"] = "none";
    EXPECT_TRUE(read(doc)->passes.empty());
    doc["passes"] = {"apply-checkpoint", "overlap-recompute"};
    EXPECT_EQ(read(doc)->passes, (std::vector<std::string>{"checkpoint", "overlap"}));
    doc["passes"] = {"checkpoint", "checkpoint"};
    EXPECT_EQ(errorOf(doc).rfind("passes[1]:", 0), 0u);
    // Inside a list, "all" and "none" mean what they mean on the command line (--passes all,hide):
    // the paper's four in their order, then the rest; a pass "all" already added is not repeated;
    // "none" (no pass) stands alone.
    doc["passes"] = {"all", "hide"};
    EXPECT_EQ(read(doc)->passes, (std::vector<std::string>{"checkpoint", "overlap", "redundancy", "prepose", "hide"}));
    doc["passes"] = {"prepose", "all"};
    EXPECT_EQ(read(doc)->passes, (std::vector<std::string>{"prepose", "checkpoint", "overlap", "redundancy"}));
    doc["passes"] = {"none"};
    EXPECT_TRUE(read(doc)->passes.empty());
    doc["passes"] = {"hide", "none"};
    EXPECT_EQ(errorOf(doc), "passes[1]: \"none\" cannot be listed with other passes (it means no pass)");
    doc["passes"] = {"all", "fast"};
    EXPECT_EQ(errorOf(doc), "passes[1]: unknown pass \"fast\" (expected " + mario::passNameList() + ", all or none)");
}

void expectRoundTrip(const Config& original) {
    json written = writeConfig(original);
    auto reread = read(written);
    ASSERT_TRUE(reread.ok()) << reread.error().message << "\n" << written.dump(2);
    EXPECT_EQ(writeConfig(*reread), written);
    EXPECT_EQ(reread->name, original.name);
    EXPECT_EQ(reread->model.name, original.model.name);
    EXPECT_EQ(reread->model.layers, original.model.layers);
    EXPECT_EQ(reread->hardware.inter_node_gb_per_s, original.hardware.inter_node_gb_per_s);
    EXPECT_EQ(reread->parallel.scheme, original.parallel.scheme);
    EXPECT_EQ(reread->parallel.chunks, original.parallel.chunks);
    EXPECT_EQ(reread->parallel.distributed_optimizer, original.parallel.distributed_optimizer);
    EXPECT_EQ(reread->microbatchCount(), original.microbatchCount());
    EXPECT_EQ(reread->memory_limit_bytes, original.memory_limit_bytes);
    EXPECT_EQ(reread->passes, original.passes);
    EXPECT_EQ(reread->unit_costs.has_value(), original.unit_costs.has_value());
    EXPECT_EQ(reread->profile, original.profile);
}

TEST(ConfigJson, WritingThenReadingRoundTrips) {
    auto preset = read(designExample());
    ASSERT_TRUE(preset.ok());
    preset->name = "chimera 13B";
    expectRoundTrip(*preset);

    auto interleaved = read(json::parse(R"({"model": "llama2-7b", "hardware": "h100", "memory_limit_gb": 38.5,
        "parallel": {"scheme": "interleaved", "pp": 4, "dp": 2, "tp": 2, "chunks": 2, "group_size": 4,
                     "micro_batch_size": 2, "global_batch_size": 32, "distributed_optimizer": true},
        "passes": "none"})"));
    ASSERT_TRUE(interleaved.ok()) << interleaved.error().message;
    expectRoundTrip(*interleaved);

    auto unit = read(json::parse(R"({"parallel": {"scheme": "chimera", "pp": 4}, "microbatches": 8,
        "unit_costs": {"forward": 1.5, "backward": 3, "recompute": 1.5, "static_bytes": 100}, "passes": "all"})"));
    ASSERT_TRUE(unit.ok()) << unit.error().message;
    expectRoundTrip(*unit);

    auto profiled = read(json::parse(R"({"model": "gpt3-1.6b", "hardware": "a100-40g",
        "parallel": {"scheme": "1f1b", "pp": 8, "global_batch_size": 16},
        "profile": "example-gpt-small.profile.json"})"));
    ASSERT_TRUE(profiled.ok()) << profiled.error().message;
    EXPECT_EQ(*profiled->profile,
              (std::filesystem::path(kProfiles) / "example-gpt-small.profile.json").lexically_normal().string());
    expectRoundTrip(*profiled);

    // The bare name that PresetLibrary::profileNames() lists names the same file.
    auto byName = read(json::parse(R"({"model": "gpt3-1.6b", "hardware": "a100-40g",
        "parallel": {"scheme": "1f1b", "pp": 8, "global_batch_size": 16}, "profile": "example-gpt-small"})"));
    ASSERT_TRUE(byName.ok()) << byName.error().message;
    EXPECT_EQ(byName->profile, profiled->profile);
}

TEST(ConfigJson, FileErrorsNameTheFile) {
    auto dir = std::filesystem::temp_directory_path() / ("mario_config_json_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string broken = (dir / "broken.config.json").string();
    std::ofstream(broken) << "{\"model\": \"gpt3-13b\",,}";
    auto config = readConfigFile(broken, PresetLibrary(kProfiles));
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.error().message, broken + ":1:22: malformed JSON: unexpected ','; expected string literal");

    std::string bad = (dir / "bad.config.json").string();
    std::ofstream(bad) << "// comments are fine\n{\"unit_costs\": {}, \"parallel\": {\"scheme\": \"x\", \"pp\": 3}, "
                          "\"microbatches\": 4}";
    config = readConfigFile(bad, PresetLibrary(kProfiles));
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.error().message, bad + ": parallel.pp: chimera needs an even number of pipeline devices (got 3)");
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mario
