// The shipped presets: every file loads, says what it is, and carries the published numbers;
// the library finds its folder the documented way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"

namespace mario {
namespace {

namespace fs = std::filesystem;
const std::string kProfiles = std::string(MARIO_TEST_SOURCE_DIR) + "/profiles";

// Sets an environment variable for one scope and puts the old value back.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(PresetLibrary, ProfilesResolveByBareNameOrFileName) {
    PresetLibrary presets(kProfiles);
    const std::string file = (std::filesystem::path(kProfiles) / "cpu-tiny.profile.json").lexically_normal().string();
    EXPECT_EQ(presets.resolveProfile("cpu-tiny"), file);
    EXPECT_EQ(presets.resolveProfile("cpu-tiny.profile.json"), file);
    EXPECT_EQ(PresetLibrary::profileName(file), "cpu-tiny");
    EXPECT_EQ(PresetLibrary::profileName("/elsewhere/mine.json"), "mine.json");
    // No such profile: the path stays as given, so the reader's "cannot open" names it.
    EXPECT_EQ(presets.resolveProfile("nothing"),
              (std::filesystem::path(kProfiles) / "nothing").lexically_normal().string());
}

TEST(PresetLibrary, ListsTheShippedPresets) {
    PresetLibrary presets(kProfiles);
    EXPECT_EQ(presets.modelNames(), (std::vector<std::string>{"gpt3-1.6b", "gpt3-13b", "llama2-13b", "llama2-3b",
                                                              "llama2-7b", "llama3-70b", "llama3-8b"}));
    EXPECT_EQ(presets.hardwareNames(), (std::vector<std::string>{"a100-40g", "a100-80g", "h100", "h200"}));
    EXPECT_EQ(presets.profileNames(), (std::vector<std::string>{"cpu-small", "cpu-tiny", "example-gpt-small"}));
}

TEST(PresetLibrary, EveryPresetFileLoadsAndNamesItself) {
    PresetLibrary presets(kProfiles);
    for (const auto& name : presets.modelNames()) {
        auto model = presets.model(name);
        ASSERT_TRUE(model.ok()) << model.error().message;
        EXPECT_EQ(model->name, name);
        auto raw = readJsonFile(kProfiles + "/models/" + name + ".json");
        ASSERT_TRUE(raw.ok());
        EXPECT_EQ((*raw)["format"], "mario-model");
        EXPECT_EQ((*raw)["version"], 1);
        EXPECT_TRUE(raw->contains("notes")) << name;
    }
    for (const auto& name : presets.hardwareNames()) {
        auto hardware = presets.hardware(name);
        ASSERT_TRUE(hardware.ok()) << hardware.error().message;
        EXPECT_EQ(hardware->name, name);
        auto raw = readJsonFile(kProfiles + "/hardware/" + name + ".json");
        ASSERT_TRUE(raw.ok());
        EXPECT_EQ((*raw)["format"], "mario-hardware");
        // Every constant of the per-operator model is the preset's own, with its source in the notes.
        for (const char* key :
             {"sm_count", "gemm_efficiency", "flash_forward_efficiency", "flash_backward_efficiency", "hbm_efficiency",
              "nvlink_efficiency", "network_efficiency", "kernel_overhead_us", "framework_reserve_gb"})
            EXPECT_TRUE(raw->contains(key)) << name << " lacks " << key;
        EXPECT_NE((*raw)["notes"].get<std::string>().find("calibrated"), std::string::npos) << name;
    }
}

TEST(PresetLibrary, PresetsCarryThePublishedNumbers) {
    PresetLibrary presets(kProfiles);
    auto a100 = presets.hardware("a100-40g");
    ASSERT_TRUE(a100.ok());
    EXPECT_EQ(a100->peak_tflops, 312);
    EXPECT_EQ(a100->memory_gb, 40);
    EXPECT_EQ(a100->hbm_gb_per_s, 1555);
    EXPECT_EQ(a100->intra_node_gb_per_s, 300);
    EXPECT_EQ(a100->inter_node_gb_per_s, 25);
    EXPECT_EQ(presets.hardware("a100-80g")->hbm_gb_per_s, 2039);
    EXPECT_EQ(presets.hardware("h100")->peak_tflops, 989);
    EXPECT_EQ(presets.hardware("h200")->memory_gb, 141);
    EXPECT_EQ(presets.hardware("h200")->hbm_gb_per_s, 4800);
    EXPECT_EQ(a100->sm_count, 108);
    EXPECT_EQ(presets.hardware("h100")->sm_count, 132);

    auto llama = presets.model("llama3-70b");
    ASSERT_TRUE(llama.ok());
    EXPECT_EQ(llama->layers, 80);
    EXPECT_EQ(llama->hidden, 8192);
    EXPECT_EQ(llama->kvHeads(), 8);
    EXPECT_EQ(llama->ffnHidden(), 28672);
    EXPECT_EQ(llama->vocab, 128256);
    EXPECT_TRUE(llama->gated_mlp);
    auto gpt = presets.model("gpt3-13b");
    ASSERT_TRUE(gpt.ok());
    EXPECT_TRUE(gpt->tied_embeddings);
    EXPECT_FALSE(gpt->gated_mlp);
    EXPECT_EQ(gpt->ffnHidden(), 4 * 5120);
}

TEST(PresetLibrary, NamesAreCaseInsensitiveAndErrorsListTheKnownOnes) {
    PresetLibrary presets(kProfiles);
    auto model = presets.model("GPT3-13B");
    ASSERT_TRUE(model.ok());
    EXPECT_EQ(model->name, "gpt3-13b");
    auto missing = presets.hardware("tpu-v5");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message, "unknown hardware preset \"tpu-v5\" (known: a100-40g, a100-80g, h100, h200)");
}

TEST(PresetLibrary, InlineObjectsReportJsonPaths) {
    auto bad = PresetLibrary::parseHardware(nlohmann::json::parse(R"({"peak_tflops": "many"})"), "hardware");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, "hardware.peak_tflops: expected a number");
    auto missing = PresetLibrary::parseModel(nlohmann::json::parse(R"({"layers": 2, "hidden": 64})"), "model");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message, "model.heads: required");
    auto heads = PresetLibrary::parseModel(
        nlohmann::json::parse(R"({"layers": 2, "hidden": 64, "heads": 5, "vocab": 10, "sequence_length": 8})"),
        "model");
    ASSERT_FALSE(heads.ok());
    EXPECT_EQ(heads.error().message, "model.heads: 5 heads do not divide hidden size 64");
    auto fraction = PresetLibrary::parseHardware(
        nlohmann::json::parse(R"({"peak_tflops": 1, "achievable_mfu": 1.5, "memory_gb": 1, "hbm_gb_per_s": 1,
                                  "intra_node_gb_per_s": 1, "inter_node_gb_per_s": 1})"),
        "hardware");
    ASSERT_FALSE(fraction.ok());
    EXPECT_EQ(fraction.error().message, "hardware.achievable_mfu: expected a number in (0, 1] (got 1.5)");
    const char* base = R"({"peak_tflops": 1, "memory_gb": 1, "hbm_gb_per_s": 1, "intra_node_gb_per_s": 1,
                           "inter_node_gb_per_s": 1)";
    auto rate = PresetLibrary::parseHardware(
        nlohmann::json::parse(std::string(base) + R"(, "elementwise_gb_per_s": 0})"), "hardware");
    ASSERT_FALSE(rate.ok());
    EXPECT_EQ(rate.error().message.rfind("hardware.elementwise_gb_per_s: ", 0), 0u) << rate.error().message;
    // The element-wise rate is written only when a preset has one, and read back.
    auto given = PresetLibrary::parseHardware(
        nlohmann::json::parse(std::string(base) + R"(, "elementwise_gb_per_s": 0.9})"), "hardware");
    ASSERT_TRUE(given.ok()) << given.error().message;
    EXPECT_EQ(given->elementwise_gb_per_s, 0.9);
    EXPECT_EQ(PresetLibrary::hardwareToJson(*given)["elementwise_gb_per_s"], 0.9);
    given->elementwise_gb_per_s = 0;
    EXPECT_FALSE(PresetLibrary::hardwareToJson(*given).contains("elementwise_gb_per_s"));
    EXPECT_FALSE(PresetLibrary::hardwareToJson(*given).contains("int32_tops"));
    auto tops =
        PresetLibrary::parseHardware(nlohmann::json::parse(std::string(base) + R"(, "int32_tops": 19.5})"), "hardware");
    ASSERT_TRUE(tops.ok()) << tops.error().message;
    EXPECT_EQ(PresetLibrary::hardwareToJson(*tops)["int32_tops"], 19.5);
}

// The products' rates per role are optional: read and written back when a preset has them
// (calibrate writes them), absent from every bundled preset and from what it writes for one, so
// those presets price every product at gemm_efficiency as before.
TEST(PresetLibrary, GemmRatesPerRoleAreOptional) {
    const char* base = R"({"peak_tflops": 1, "memory_gb": 1, "hbm_gb_per_s": 1, "intra_node_gb_per_s": 1,
                           "inter_node_gb_per_s": 1)";
    auto roles = PresetLibrary::parseHardware(
        nlohmann::json::parse(std::string(base) +
                              R"(, "gemm_input_grad_efficiency": 0.7, "gemm_weight_grad_efficiency": 0.65})"),
        "hardware");
    ASSERT_TRUE(roles.ok()) << roles.error().message;
    EXPECT_EQ(roles->gemm_input_grad_efficiency, 0.7);
    EXPECT_EQ(roles->gemm_weight_grad_efficiency, 0.65);
    EXPECT_EQ(PresetLibrary::hardwareToJson(*roles)["gemm_input_grad_efficiency"], 0.7);
    EXPECT_EQ(PresetLibrary::hardwareToJson(*roles)["gemm_weight_grad_efficiency"], 0.65);
    auto above = PresetLibrary::parseHardware(
        nlohmann::json::parse(std::string(base) + R"(, "gemm_weight_grad_efficiency": 1.2})"), "hardware");
    ASSERT_FALSE(above.ok());
    EXPECT_EQ(above.error().message, "hardware.gemm_weight_grad_efficiency: expected a number in (0, 1] (got 1.2)");
    PresetLibrary presets(kProfiles);
    for (const auto& name : presets.hardwareNames()) {
        auto hw = presets.hardware(name);
        ASSERT_TRUE(hw.ok()) << name;
        EXPECT_EQ(hw->gemm_input_grad_efficiency, 0) << name;
        EXPECT_EQ(hw->gemm_weight_grad_efficiency, 0) << name;
        EXPECT_FALSE(PresetLibrary::hardwareToJson(*hw).contains("gemm_input_grad_efficiency")) << name;
    }
}

TEST(PresetLibrary, JsonFormRoundTrips) {
    PresetLibrary presets(kProfiles);
    for (const auto& name : presets.modelNames()) {
        auto model = presets.model(name);
        ASSERT_TRUE(model.ok());
        auto again = PresetLibrary::parseModel(PresetLibrary::modelToJson(*model), "model");
        ASSERT_TRUE(again.ok()) << again.error().message;
        EXPECT_EQ(PresetLibrary::modelToJson(*again), PresetLibrary::modelToJson(*model));
    }
    for (const auto& name : presets.hardwareNames()) {
        auto hardware = presets.hardware(name);
        ASSERT_TRUE(hardware.ok());
        auto again = PresetLibrary::parseHardware(PresetLibrary::hardwareToJson(*hardware), "hardware");
        ASSERT_TRUE(again.ok()) << again.error().message;
        EXPECT_EQ(PresetLibrary::hardwareToJson(*again), PresetLibrary::hardwareToJson(*hardware));
    }
}

TEST(PresetLibrary, LocateHonoursTheEnvironmentFirst) {
    ScopedEnv env("MARIO_PROFILES_DIR", kProfiles.c_str());
    auto found = PresetLibrary::locate("/nonexistent/bin/mario");
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ(found->directory(), kProfiles);
    EXPECT_EQ(PresetLibrary::searchPath().front(), kProfiles);
}

TEST(PresetLibrary, LocateFindsProfilesBesideARelocatedInstall) {
    ScopedEnv env("MARIO_PROFILES_DIR", nullptr);
    fs::path root = fs::temp_directory_path() / ("mario_preset_library_test_" + std::to_string(::getpid()));
    fs::create_directories(root / "bin");
    fs::create_directories(root / "share" / "mario" / "profiles" / "models");
    auto found = PresetLibrary::locate((root / "bin" / "mario").string());
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ(fs::path(found->directory()), (root / "share" / "mario" / "profiles").lexically_normal());
    EXPECT_TRUE(found->modelNames().empty());
    fs::remove_all(root);

    // Without an executable path the build falls back to its compiled-in folders.
    auto fallback = PresetLibrary::locate();
    ASSERT_TRUE(fallback.ok()) << fallback.error().message;
    EXPECT_FALSE(fallback->modelNames().empty());
}

}  // namespace
}  // namespace mario
