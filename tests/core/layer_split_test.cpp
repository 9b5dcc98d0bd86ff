// parallel.layer_split (docs/config-format.md): the balanced split is exact, checked against
// every contiguous split enumerated by brute force, on random loads and placements and on
// LLaMA-2 3B's 26 layers over eight chain positions with the analytical model's own costs;
// the config reader's one-line refusals and its round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "core/cost/BalancedLayerSplit.h"
#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/session/PlanBuilder.h"
#include "core/tune/LaunchExport.h"
#include "core/tune/Tuner.h"

namespace mario {
namespace {

const std::string kRoot = MARIO_TEST_SOURCE_DIR;
const PresetLibrary kPresets(kRoot + "/profiles");

// Every split of `layers` over `positions` with at least `least` each, one call per split.
void everySplit(int layers, int positions, int least, const std::function<void(const std::vector<int>&)>& visit) {
    std::vector<int> counts(positions, least);
    std::function<void(int, int)> place = [&](int p, int left) {
        if (p == positions - 1) {
            counts[p] = left;
            visit(counts);
            return;
        }
        for (int k = least; left - k >= least * (positions - 1 - p); ++k) {
            counts[p] = k;
            place(p + 1, left - k);
        }
    };
    if (layers >= least * positions) place(0, layers);
}

// Brute force: the smallest maximum device load, and the fewest layers moved from `preferred`
// among the splits that reach it.
struct Brute {
    double best = std::numeric_limits<double>::infinity();
    int nearest = std::numeric_limits<int>::max();
};

Brute bruteForce(const LayerSplitProblem& problem) {
    Brute out;
    const int n = static_cast<int>(problem.preferred.size());
    everySplit(problem.layers, n, problem.min_count,
               [&](const std::vector<int>& c) { out.best = std::min(out.best, maxDeviceLoad(problem, c)); });
    everySplit(problem.layers, n, problem.min_count, [&](const std::vector<int>& c) {
        if (maxDeviceLoad(problem, c) > out.best * (1 + 1e-9)) return;
        int moved = 0;
        for (int p = 0; p < n; ++p) moved += std::abs(c[p] - problem.preferred[p]);
        out.nearest = std::min(out.nearest, moved);
    });
    return out;
}

int movedFrom(const std::vector<int>& a, const std::vector<int>& b) {
    int moved = 0;
    for (std::size_t p = 0; p < a.size(); ++p) moved += std::abs(a[p] - b[p]);
    return moved;
}

// The placements Mario generates, by chain position: a chain (device p), looped over `pp`
// devices (p mod pp), two mirrored chains (Chimera, DualPipe: d and n-1-d on every device, each
// position on two devices) and a V (d and n-1-d on device d, n = 2 pp).
enum class Shape { Chain, Looped, Mirrored, V };

std::vector<std::vector<int>> placement(Shape shape, int positions, int pp) {
    std::vector<std::vector<int>> devices;
    if (shape == Shape::Chain) {
        for (int p = 0; p < positions; ++p) devices.push_back({p});
    } else if (shape == Shape::Looped) {
        devices.resize(pp);
        for (int p = 0; p < positions; ++p) devices[p % pp].push_back(p);
    } else if (shape == Shape::Mirrored) {
        for (int d = 0; d < positions; ++d) devices.push_back({d, positions - 1 - d});
    } else {
        for (int d = 0; d < positions / 2; ++d) devices.push_back({d, positions - 1 - d});
    }
    return devices;
}

TEST(BalancedLayerSplit, EqualsBruteForceOnRandomLoadsAndPlacements) {
    std::mt19937 random(43);
    int cases = 0, preferredKept = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const Shape shape = static_cast<Shape>(trial % 4);
        const int pp = 2 + static_cast<int>(random() % 3);
        const int positions = shape == Shape::Chain ? pp : 2 * pp;
        const int layers = positions + static_cast<int>(random() % 7);
        LayerSplitProblem problem;
        problem.layers = layers;
        problem.device_positions = placement(shape, positions, pp);
        // A per-layer cost, a fixed part at the ends (embedding, head), a small nonlinearity
        // (host-bound small stages); loads rounded to make ties, which the tie-break must settle.
        const double perLayer = 1 + random() % 3, embedding = random() % 4, head = random() % 6;
        for (int p = 0; p < positions; ++p) {
            std::vector<double> loads(layers + 1);
            for (int k = 0; k <= layers; ++k)
                loads[k] = std::round(perLayer * k + (p == 0 ? embedding : 0) + (p == positions - 1 ? head : 0) +
                                      (k < 2 ? 0.5 : 0));
            problem.position_load.push_back(loads);
        }
        problem.preferred.assign(positions, layers / positions);
        for (int e = 0; e < layers % positions; ++e) ++problem.preferred[(positions - layers % positions) / 2 + e];
        auto split = balancedLayerSplit(problem);
        ASSERT_TRUE(split.ok()) << split.error().message;
        const Brute brute = bruteForce(problem);
        EXPECT_NEAR(split->max_load, brute.best, 1e-9) << "trial " << trial;
        EXPECT_EQ(movedFrom(split->counts, problem.preferred), brute.nearest) << "trial " << trial;
        int sum = 0;
        for (int k : split->counts) {
            EXPECT_GE(k, 1);
            sum += k;
        }
        EXPECT_EQ(sum, layers);
        if (brute.nearest == 0) {
            EXPECT_EQ(split->counts, problem.preferred);
            ++preferredKept;
        }
        ++cases;
    }
    EXPECT_EQ(cases, 400);
    EXPECT_GT(preferredKept, 0);  // some cases do exercise "today's split when it is optimal"
}

Config llama3b(const std::string& scheme, int pp, int chunks, const nlohmann::json& split) {
    nlohmann::json parallel = {{"scheme", scheme}, {"pp", pp}, {"micro_batch_size", 1}, {"global_batch_size", 4 * pp}};
    if (chunks > 1) parallel["chunks"] = chunks;
    if (!split.is_null()) parallel["layer_split"] = split;
    nlohmann::json json = {{"format", "mario-config"},
                           {"version", 1},
                           {"model", "llama2-3b"},
                           {"hardware", "a100-40g"},
                           {"parallel", parallel}};
    auto config = readConfig(json, kPresets);
    EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
    return *config;
}

// The layers of each chain position of a built plan, read from its stages along chain 0.
std::vector<int> builtCounts(const Plan& plan) {
    std::vector<int> counts;
    const std::vector<int> chain = plan.pipelines.empty() ? std::vector<int>{} : plan.pipelines.front();
    if (chain.empty())
        for (const StageSpec& s : plan.stages) counts.push_back(s.layers->second - s.layers->first);
    for (int stage : chain) counts.push_back(plan.stages[stage].layers->second - plan.stages[stage].layers->first);
    return counts;
}

// LLaMA-2 3B, 26 layers on eight chain positions, four placements: the plan's balanced split
// reaches the smallest maximum device load of all 480 700 contiguous splits, with each
// position's F + B + R taken from the cost model one stage at a time.
TEST(BalancedLayerSplit, LlamaThreeBillionPlansEqualBruteForce) {
    struct Case {
        std::string scheme;
        int pp, chunks;
        Shape shape;
    };
    for (const Case& c : {Case{"1f1b", 8, 1, Shape::Chain}, Case{"interleaved", 4, 2, Shape::Looped},
                          Case{"chimera", 8, 1, Shape::Mirrored}, Case{"zbv", 4, 1, Shape::V}}) {
        const Config config = llama3b(c.scheme, c.pp, c.chunks, "balanced");
        auto plan = buildPlan(config);
        ASSERT_TRUE(plan.ok()) << plan.error().message;
        const std::vector<int> counts = builtCounts(*plan);
        ASSERT_EQ(counts.size(), 8u) << c.scheme;

        const int layers = config.model.layers;
        LayerSplitProblem problem;
        problem.layers = layers;
        problem.device_positions = placement(c.shape, 8, c.pp);
        for (int p = 0; p < 8; ++p) {
            std::vector<double> loads(layers + 1, std::numeric_limits<double>::infinity());
            for (int k = 1; k <= 8; ++k) {  // no split of 26 over 8 puts more than 19 anywhere; 8 suffices here
                auto cost = computeStageCosts(config, {StageLayout{0, k, p == 0, p == 7}});
                ASSERT_TRUE(cost.ok());
                loads[k] = (*cost)[0].forward_ms + (*cost)[0].backward_ms + (*cost)[0].recompute_ms;
            }
            problem.position_load.push_back(loads);
        }
        const Config even = llama3b(c.scheme, c.pp, c.chunks, nullptr);
        problem.preferred = builtCounts(*buildPlan(even));
        const Brute brute = bruteForce(problem);
        EXPECT_NEAR(maxDeviceLoad(problem, counts), brute.best, 1e-9 * brute.best) << c.scheme;
        EXPECT_EQ(movedFrom(counts, problem.preferred), brute.nearest) << c.scheme;
        EXPECT_LE(brute.best, maxDeviceLoad(problem, problem.preferred)) << c.scheme;
    }
}

TEST(LayerSplitConfig, AbsentIsTodaysEvenSplitAndWritesNothing) {
    const Config config = llama3b("1f1b", 8, 1, nullptr);
    EXPECT_TRUE(config.parallel.layer_split.isEven());
    EXPECT_FALSE(writeConfig(config)["parallel"].contains("layer_split"));
    EXPECT_EQ(builtCounts(*buildPlan(config)), (std::vector<int>{3, 3, 3, 4, 4, 3, 3, 3}));
    EXPECT_EQ(builtCounts(*buildPlan(llama3b("1f1b", 8, 1, "even"))), builtCounts(*buildPlan(config)));
}

TEST(LayerSplitConfig, ExplicitCountsPlaceTheLayersAndRoundTrip) {
    const nlohmann::json counts = {2, 4, 4, 4, 4, 4, 3, 1};
    const Config config = llama3b("1f1b", 8, 1, counts);
    auto plan = buildPlan(config);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_EQ(builtCounts(*plan), counts.get<std::vector<int>>());
    EXPECT_EQ(plan->stages[7].layers, std::make_pair(25, 26));
    for (const Config& written : {config, llama3b("chimera", 8, 1, "balanced")}) {
        auto back = readConfig(writeConfig(written), kPresets);
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(back->parallel.layer_split, written.parallel.layer_split);
    }
    // An embedding-only first stage, as torchtitan allows.
    EXPECT_TRUE(buildPlan(llama3b("1f1b", 8, 1, {0, 4, 4, 4, 4, 4, 4, 2})).ok());
}

TEST(LayerSplitConfig, RefusalsAreOneLineNamingTheKey) {
    auto refusal = [](const nlohmann::json& split, const std::string& scheme = "1f1b", bool unit = false) {
        nlohmann::json parallel = {
            {"scheme", scheme}, {"pp", 8}, {"micro_batch_size", 1}, {"global_batch_size", 32}, {"layer_split", split}};
        nlohmann::json json = {{"format", "mario-config"}, {"version", 1}, {"parallel", parallel}};
        if (unit) json["unit_costs"] = nlohmann::json::object();
        else json["model"] = "llama2-3b", json["hardware"] = "a100-40g";
        auto config = readConfig(json, kPresets);
        EXPECT_FALSE(config.ok()) << split.dump();
        const std::string message = config.ok() ? "" : config.error().message;
        EXPECT_EQ(message.find('\n'), std::string::npos);
        return message;
    };
    EXPECT_EQ(refusal("middle"), "parallel.layer_split: expected \"even\", \"balanced\", \"search\" or an array of "
                                 "layer counts, one per chain position (got \"middle\")");
    EXPECT_EQ(refusal({3, 3, 3, 3, 3, 3, 3}),
              "parallel.layer_split: 7 counts, but a 1f1b chain on 8 devices has 8 positions");
    EXPECT_EQ(refusal({3, 3, 3, 3, 3, 3, 3, 3}),
              "parallel.layer_split: the counts add up to 24 layers, but model.layers is 26");
    EXPECT_EQ(refusal({4, 4, 0, 4, 4, 4, 3, 3}),
              "parallel.layer_split[2]: a middle position needs at least one layer (only the first and last may hold "
              "none)");
    EXPECT_EQ(refusal({4, -1, 4, 4, 4, 4, 3, 4}),
              "parallel.layer_split[1]: expected a layer count in [0, 100000] (got -1)");
    EXPECT_EQ(refusal("balanced", "1f1b", true),
              "parallel.layer_split: unit_costs have no layers to split (use \"even\" or leave it out)");
    EXPECT_EQ(refusal("search", "1f1b", true),
              "parallel.layer_split: unit_costs have no layers to split (use \"even\" or leave it out)");
    // Chimera's chain has pp positions, interleaved's pp * chunks.
    EXPECT_NE(refusal(std::vector<int>(16, 1), "chimera").find("a chimera chain on 8 devices has 8 positions"),
              std::string::npos);
}

// The tuner's candidates: explicit counts stay only on the base's own shape (elsewhere they
// would be refused, or mean other positions), "balanced" goes to every candidate.
TEST(LayerSplitConfig, TunerCandidatesKeepExplicitCountsOnlyOnTheBaseShape) {
    const Config base = llama3b("1f1b", 8, 1, {2, 4, 4, 4, 4, 4, 3, 1});
    TuneCandidate same;
    same.scheme = Scheme::OneFOneB, same.pp = 8, same.chunks = 1;
    TuneCandidate other = same;
    other.scheme = Scheme::Interleaved, other.pp = 4, other.chunks = 2;  // also 8 positions
    EXPECT_EQ(Tuner::configFor(base, same, {}).parallel.layer_split, base.parallel.layer_split);
    const Config moved = Tuner::configFor(base, other, {});
    EXPECT_TRUE(moved.parallel.layer_split.isEven());
    EXPECT_TRUE(buildPlan(moved).ok());
    const Config balanced = Tuner::configFor(llama3b("1f1b", 8, 1, "balanced"), other, {});
    EXPECT_EQ(balanced.parallel.layer_split.kind, LayerSplitKind::Balanced);
}

// Megatron-LM's arguments carry an uneven split through its first/last-stage counts where those
// say it exactly (the middle stages equal), and say in one line that they cannot otherwise.
TEST(LayerSplitConfig, MegatronArgumentsCarryTheSplitOrSaySo) {
    TuneCandidate candidate;
    candidate.scheme = Scheme::OneFOneB, candidate.pp = 8, candidate.chunks = 1;
    const std::string carried = megatronArguments(llama3b("1f1b", 8, 1, {1, 4, 4, 4, 4, 4, 4, 1}), candidate);
    EXPECT_NE(carried.find("\n--decoder-first-pipeline-num-layers 1\n--decoder-last-pipeline-num-layers 1\n"),
              std::string::npos)
        << carried;
    EXPECT_EQ(carried.find("warning"), std::string::npos) << carried;
    const std::string uneven = megatronArguments(llama3b("1f1b", 8, 1, {3, 4, 3, 4, 3, 3, 3, 3}), candidate);
    EXPECT_EQ(uneven.find("\n--decoder-first-pipeline-num-layers"), std::string::npos);
    EXPECT_NE(uneven.find("# warning: the plan's layer split 3-4-3-4-3-3-3-3 (parallel.layer_split) has no "
                          "Megatron-LM flags here"),
              std::string::npos)
        << uneven;
    // Without the key: no split flags, and the old warning about 26 layers on 8 stages.
    const std::string even = megatronArguments(llama3b("1f1b", 8, 1, nullptr), candidate);
    EXPECT_EQ(even.find("\n--decoder-first-pipeline-num-layers"), std::string::npos);
    EXPECT_NE(even.find("26 layers do not split evenly over 8 stages"), std::string::npos);
}

}  // namespace
}  // namespace mario
