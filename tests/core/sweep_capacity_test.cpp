// Capacity (core/sweep/Capacity.h) against a brute-force scan on a grid of small configs: for
// every knob that grows memory, scheme, pass set and limit, the scan simulates every grid value
// through its own path (the Config edited field by field, generated, validated, prepared); the
// answer must be the last value of the scan's leading run of fits, the next valid value the
// first that does not fit, and the full monotonicity check must report exactly the grids where
// a later value fits again.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassVocabulary.h"
#include "core/session/PlanBuilder.h"
#include "core/session/PreparedSchedule.h"
#include "core/sim/MemoryFit.h"
#include "core/sim/Validator.h"
#include "core/sweep/Capacity.h"

namespace mario {
namespace {

const PresetLibrary kPresets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");

Config baseConfig(double limitGb) {
    nlohmann::json document = {
        {"format", "mario-config"},
        {"version", 1},
        {"model", "gpt3-1.6b"},
        {"hardware", "a100-40g"},
        {"memory_limit_gb", limitGb},
        {"parallel", {{"scheme", "1f1b"}, {"pp", 4}, {"micro_batch_size", 1}, {"global_batch_size", 16}}}};
    auto config = readConfig(document, kPresets);
    EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
    return *config;
}

// The brute force's own edit of a Config (not the engine's JSON edit): nullopt when the config
// or its plan is refused, else whether every device fits.
std::optional<bool> fitsByHand(Config config, const std::string& key, int value, const SchemeChoice& scheme,
                               const std::vector<PassId>& passes) {
    config.parallel.scheme = scheme.scheme;
    config.parallel.chunks = schemeInfo(scheme.scheme).chunked ? scheme.chunks : 1;
    if (key == "parallel.micro_batch_size") config.parallel.micro_batch_size = value;
    else if (key == "model.sequence_length") config.model.sequence_length = value;
    else if (key == "model.layers") config.model.layers = value;
    else if (key == "model.hidden") {  // GPT-3 1.6B's 128-wide heads, kept
        config.model.hidden = value;
        config.model.heads = config.model.kv_heads = value / 128;
        config.model.ffn_hidden = 4 * value;
    } else ADD_FAILURE() << key;
    if (checkConfig(config)) return std::nullopt;
    auto plan = buildPlan(config);
    if (!plan || !Validator::validate(*plan).ok()) return std::nullopt;
    ScheduleInput input;
    input.config = config;
    input.source = std::move(*plan);
    input.passes = passes;
    auto prepared = prepareSchedule(input);
    if (!prepared) return std::nullopt;
    return memoryFit(prepared->result, prepared->plan.info).fits();
}

struct Grid {
    const char* key;
    int min, max, step;
};

TEST(Capacity, EqualsABruteForceScanOnAGridOfSmallConfigs) {
    const Grid grids[] = {{"parallel.micro_batch_size", 1, 16, 1},
                          {"model.sequence_length", 512, 8192, 512},
                          {"model.layers", 4, 64, 4},
                          {"model.hidden", 256, 4096, 256}};
    const std::vector<SchemeChoice> schemes = {{Scheme::OneFOneB, 0}, {Scheme::Interleaved, 2}, {Scheme::GPipe, 0}};
    const std::vector<std::vector<PassId>> passSets = {{}, paperPasses()};
    int searches = 0, answered = 0, noneFits = 0, reachedMax = 0, nonMonotone = 0;
    for (double limitGb : {16.0, 30.0})
        for (const Grid& grid : grids) {
            CapacitySpec spec;
            spec.base = baseConfig(limitGb);
            ASSERT_TRUE(parseGrow(std::string(grid.key) + "=" + std::to_string(grid.min) + ":" +
                                      std::to_string(grid.max) + ":" + std::to_string(grid.step),
                                  spec)
                            .ok());
            spec.schemes = schemes;
            spec.pass_sets = passSets;
            spec.check = CapacitySpec::Monotonicity::Scan;
            auto result = runCapacity(spec);
            ASSERT_TRUE(result.ok()) << result.error().message;
            // The spot check simulates fewer values and finds the same answers.
            CapacitySpec spot = spec;
            spot.check = CapacitySpec::Monotonicity::Spot;
            auto spotted = runCapacity(spot);
            ASSERT_TRUE(spotted.ok());
            for (std::size_t i = 0; i < result->answers.size(); ++i) {
                EXPECT_EQ(spotted->answers[i].largest, result->answers[i].largest) << grid.key << " answer " << i;
                EXPECT_LE(spotted->answers[i].probes, result->answers[i].probes) << grid.key << " answer " << i;
            }
            ASSERT_EQ(result->answers.size(), schemes.size() * passSets.size());
            for (std::size_t s = 0; s < schemes.size(); ++s)
                for (std::size_t p = 0; p < passSets.size(); ++p) {
                    const CapacityAnswer& answer = result->answers[s * passSets.size() + p];
                    const std::string what = std::string(grid.key) + " " + schemes[s].label() + " " +
                                             passSetLabel(passSets[p]) + " at " + std::to_string(limitGb) + " GB";
                    // The scan: the leading run of fits, the first valid value after it, and
                    // whether anything fits again beyond that.
                    std::optional<int> lastFit, firstOver;
                    bool fitsAgain = false;
                    for (int v = grid.min; v <= grid.max; v += grid.step) {
                        const auto fits = fitsByHand(spec.base, grid.key, v, schemes[s], passSets[p]);
                        if (!fits) continue;
                        if (!firstOver && *fits) lastFit = v;
                        else if (!firstOver) firstOver = v;
                        else fitsAgain = fitsAgain || *fits;
                    }
                    ++searches;
                    if (!lastFit) {
                        // Nothing fits from the start (or nothing runs): no answer.
                        EXPECT_FALSE(answer.largest) << what;
                        ++noneFits;
                        continue;
                    }
                    ASSERT_TRUE(answer.largest) << what;
                    EXPECT_EQ(*answer.largest, *lastFit) << what;
                    if (firstOver) {
                        ASSERT_TRUE(answer.first_over) << what;
                        EXPECT_EQ(answer.first_over->values[0].number, *firstOver) << what;
                        EXPECT_FALSE(answer.first_over->fitsMemory()) << what;
                    } else {
                        // Nothing valid above: the grid's end fits, or every larger value is refused.
                        EXPECT_TRUE(answer.reached_max == (*lastFit == grid.max)) << what;
                        EXPECT_EQ(answer.refused_above.empty(), *lastFit == grid.max) << what;
                        ++reachedMax;
                    }
                    ASSERT_TRUE(answer.at) << what;
                    EXPECT_TRUE(answer.at->fitsMemory()) << what;
                    EXPECT_GT(answer.at->step_ms, 0) << what;
                    // Scan: a violation is reported exactly where a value beyond the first miss
                    // fits again (the scan above covers up to twice that index; so does Scan).
                    if (!fitsAgain) {
                        EXPECT_TRUE(answer.violations.empty()) << what << ": " << answer.violations.front();
                    } else {
                        EXPECT_FALSE(answer.violations.empty()) << what;
                    }
                    nonMonotone += fitsAgain;
                    ++answered;
                }
        }
    // The grid exercised every outcome: answers, nothing fitting, and the grid's end fitting.
    EXPECT_EQ(searches, 48);
    EXPECT_GT(answered, 10);
    EXPECT_GT(noneFits + reachedMax, 0);
    RecordProperty("non_monotone", nonMonotone);
}

TEST(Capacity, RefusesKnobsThatDoNotGrowMemoryAndConfigsWithoutALimit) {
    CapacitySpec spec;
    auto pp = parseGrow("parallel.pp", spec);
    ASSERT_FALSE(pp.ok());
    EXPECT_NE(pp.error().message.find("parallel.micro_batch_size"), std::string::npos);  // the valid ones
    EXPECT_FALSE(parseGrow("micro_batch_size=4", spec).ok());  // a range, not a value
    ASSERT_TRUE(parseGrow("micro_batch_size=1:16", spec).ok());
    EXPECT_EQ(spec.step, 1);
    EXPECT_EQ(spec.max, 16);
    // Unit costs with no limit: nothing to fit within.
    auto unit = readConfig(nlohmann::json{{"format", "mario-config"},
                                          {"version", 1},
                                          {"unit_costs", nlohmann::json::object()},
                                          {"parallel", {{"scheme", "1f1b"}, {"pp", 2}, {"global_batch_size", 4}}}},
                           kPresets);
    ASSERT_TRUE(unit.ok()) << unit.error().message;
    spec.base = *unit;
    auto refused = runCapacity(spec);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("memory_limit_gb"), std::string::npos);
}

TEST(Capacity, CancelStopsTheSearches) {
    CapacitySpec spec;
    spec.base = baseConfig(16);
    ASSERT_TRUE(parseGrow("model.sequence_length=512:65536:512", spec).ok());
    spec.schemes = {{Scheme::OneFOneB, 0}, {Scheme::GPipe, 0}, {Scheme::Interleaved, 2}};
    spec.threads = 1;
    std::atomic<bool> cancel{false};
    auto result = runCapacity(
        spec, [&](const CapacityProgress& progress) { cancel = progress.done >= 1; }, &cancel);
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result->cancelled);
    EXPECT_TRUE(result->answers[0].largest.has_value());  // finished before the cancel
    EXPECT_EQ(result->answers[2].probes, 0);              // never started
}

}  // namespace
}  // namespace mario
