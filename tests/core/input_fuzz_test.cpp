// The fuzz harness: the bundled examples (configs, and the plans generated from them, passes
// applied) mutated with a fixed seed, each written to a file and opened the way every program
// opens files (loadInputFile, then the validator and the simulator). Every case must end in a
// schedule whose numbers are finite, or in one line that starts with the file's path: never a
// crash, an exception, an "inf" or a multi-gigabyte allocation. CI runs a few thousand cases;
// the `long` label runs MARIO_FUZZ_CASES of them (docs/testing.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "core/io/PlanJson.h"
#include "core/passes/PassManager.h"
#include "core/session/InputFile.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"

namespace mario {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = MARIO_TEST_SOURCE_DIR;

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The seeds: every bundled config, and the plan each one generates (with its passes), so that
// program-level mutations have real programs to work on.
struct Seed {
    std::string name;
    std::string text;
    bool plan = false;
};

std::vector<Seed> seeds(const PresetLibrary& presets) {
    std::vector<Seed> out;
    for (const auto& entry : fs::directory_iterator(kSource / "resources/examples")) {
        if (entry.path().extension() != ".json") continue;
        out.push_back({entry.path().filename().string(), slurp(entry.path()), false});
        auto input = loadInputFile(entry.path().string(), presets);
        EXPECT_TRUE(input.ok()) << entry.path() << ": " << (input.ok() ? "" : input.error().message);
        if (!input) continue;
        Plan plan = input->plan;
        EXPECT_TRUE(runPasses(plan, input->file_passes).ok());
        out.push_back({entry.path().stem().string() + ".mario.json", writePlan(plan).dump(1), true});
    }
    return out;
}

// Numbers a hostile or careless file holds: beyond double, beyond int and int64, negative
// zero, denormals, tokens JSON does not have.
const char* const kHostileNumbers[] = {
    "1e999",  "-1e999", "1.7e308",  "-0", "2147483648", "4294967299", "9223372036854775808", "18446744073709551616",
    "1e-320", "NaN",    "Infinity", "0",  "-1",         "65536",      "100000000",           "2.5"};

std::string replaceRandomNumber(const std::string& text, std::mt19937& rng) {
    static const std::regex number(R"(-?\b\d+(\.\d+)?([eE][-+]?\d+)?)");
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
        spans.emplace_back(it->position(), it->length());
    if (spans.empty()) return text;
    const auto [at, length] = spans[rng() % spans.size()];
    std::string out = text;
    out.replace(at, length, kHostileNumbers[rng() % std::size(kHostileNumbers)]);
    return out;
}

// Reorders, duplicates, drops or moves instructions of a plan's programs (JSON level).
std::string mutateProgram(const std::string& text, std::mt19937& rng) {
    nlohmann::json doc = nlohmann::json::parse(text);
    auto& devices = doc["devices"];
    auto& program = devices[rng() % devices.size()]["program"];
    if (program.empty()) return text;
    const std::size_t i = rng() % program.size(), j = rng() % program.size();
    switch (rng() % 5) {
        case 0: std::swap(program[i], program[j]); break;
        case 1: program.insert(program.begin() + static_cast<long>(j), program[i]); break;
        case 2: program.erase(program.begin() + static_cast<long>(i)); break;
        case 3: devices[rng() % devices.size()]["program"].push_back(program[i]); break;
        default: program[i] = std::to_string(rng() % 4) + "F" + std::to_string(rng() % 100000); break;
    }
    return doc.dump(1);
}

std::string mutate(const Seed& seed, std::mt19937& rng) {
    switch (rng() % 4) {
        case 0: return seed.text.substr(0, rng() % seed.text.size());  // a crash mid-save
        case 1: return seed.plan ? mutateProgram(seed.text, rng) : replaceRandomNumber(seed.text, rng);
        default: {
            std::string text = replaceRandomNumber(seed.text, rng);
            return rng() % 3 == 0 ? replaceRandomNumber(text, rng) : text;
        }
    }
}

int caseCount() {
    const char* env = std::getenv("MARIO_FUZZ_CASES");
    return env ? std::max(1, std::atoi(env)) : 3000;
}

TEST(InputFuzz, MutatedExamplesGiveAFiniteScheduleOrOneLineNamingTheFile) {
    const PresetLibrary presets((kSource / "profiles").string());
    const std::vector<Seed> all = seeds(presets);
    ASSERT_GE(all.size(), 8u);
    const fs::path dir = fs::temp_directory_path() / ("mario_input_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::mt19937 rng(20261123);
    int accepted = 0, refused = 0;
    for (int trial = 0, n = caseCount(); trial < n; ++trial) {
        const Seed& seed = all[rng() % all.size()];
        const std::string text = mutate(seed, rng);
        const fs::path path = dir / seed.name;
        std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
        const std::string where = "case " + std::to_string(trial) + " (" + seed.name + "): ";
        auto input = loadInputFile(path.string(), presets);
        if (!input) {
            ++refused;
            const std::string& message = input.error().message;
            EXPECT_EQ(message.rfind(path.string(), 0), 0u) << where << message;
            EXPECT_EQ(message.find('\n'), std::string::npos) << where << message;
            EXPECT_LT(message.size(), 400u) << where << message;
            continue;
        }
        const ValidationReport report = Validator::validate(input->plan);
        if (!report.ok()) {
            ++refused;
            EXPECT_EQ(report.summary().find('\n'), std::string::npos) << where << report.summary();
            continue;
        }
        auto sim = Simulator::run(input->plan);
        if (!sim) {
            ++refused;  // an overflowing sum of finite costs: named, never printed as inf
            EXPECT_NE(sim.error().message.find("not a finite number"), std::string::npos)
                << where << sim.error().message;
            continue;
        }
        ++accepted;
        EXPECT_TRUE(std::isfinite(sim->makespan_ms)) << where;
        for (const auto& device : sim->devices) EXPECT_TRUE(std::isfinite(device.peak_bytes)) << where;
    }
    fs::remove_all(dir);
    std::printf("input fuzz: %d cases, %d accepted and simulated, %d refused with one line\n", accepted + refused,
                accepted, refused);
    // Both outcomes must be common, or the mutations are too weak or too wild to test anything.
    EXPECT_GT(accepted, caseCount() / 20);
    EXPECT_GT(refused, caseCount() / 4);
}

}  // namespace
}  // namespace mario
