// parallel.layer_split = "search" (core/session/SearchedLayerSplit.h): on small chains the local
// search reaches the fastest split found by simulating every split there is; on LLaMA-2 3B it is
// never slower than the even or the balanced split, each simulated here on its own; it is
// deterministic; the plan it builds, written and read back, re-simulates to the step it chose;
// the config reader takes "search" and writes it back.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/PlanJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassVocabulary.h"
#include "core/session/PlanBuilder.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleFiles.h"
#include "core/session/SearchedLayerSplit.h"

namespace mario {
namespace {

const std::string kRoot = MARIO_TEST_SOURCE_DIR;
const PresetLibrary kPresets(kRoot + "/profiles");

Config llama3b(const std::string& scheme, int pp, int microbatches, const nlohmann::json& split = nullptr) {
    nlohmann::json parallel = {
        {"scheme", scheme}, {"pp", pp}, {"micro_batch_size", 1}, {"global_batch_size", microbatches}};
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

std::vector<PassId> passList(const std::string& list) {
    auto passes = parsePassList(list);
    EXPECT_TRUE(passes.ok());
    return *passes;
}

// Every split of `layers` over `positions`, the ends holding none or more, the middle one or
// more (what the search may reach), one call per split.
void everySplit(int layers, int positions, const std::function<void(const std::vector<int>&)>& visit) {
    std::vector<int> counts(positions, 0);
    std::function<void(int, int)> place = [&](int p, int left) {
        if (p == positions - 1) {
            counts[p] = left;
            visit(counts);
            return;
        }
        const int least = p == 0 ? 0 : 1;
        const int middleAfter = std::max(0, positions - 2 - p);  // middle positions still to fill
        for (int k = least; left - k >= middleAfter; ++k) {
            counts[p] = k;
            place(p + 1, left - k);
        }
    };
    place(0, layers);
}

// The step of `config` on `counts` with `passes`, through the plan builder and the session's
// one path (not through the search's own evaluation).
double stepOf(Config config, const std::vector<int>& counts, const std::vector<PassId>& passes) {
    config.parallel.layer_split = {LayerSplitKind::Explicit, counts};
    auto plan = buildPlan(config);
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().message);
    ScheduleInput input;
    input.config = config;
    input.source = *plan;
    input.passes = passes;
    auto prepared = prepareSchedule(input);
    EXPECT_TRUE(prepared.ok()) << (prepared.ok() ? "" : prepared.error().message);
    return prepared->result.makespan_ms;
}

// Ten layers on four positions (165 splits): the search's step equals the fastest of all of
// them, on a chain and on Chimera's mirrored pair, with no passes and with the paper's and hide.
TEST(SearchedLayerSplit, EqualsBruteForceOverEverySplitOnSmallChains) {
    int evenNotBest = 0;
    for (const std::string scheme : {"1f1b", "gpipe", "chimera"}) {
        for (const std::string passes : {"none", "all,hide"}) {
            Config config = llama3b(scheme, 4, 8);
            config.model.layers = 10;
            const std::vector<PassId> list = passList(passes);
            double best = std::numeric_limits<double>::infinity();
            int splits = 0;
            everySplit(10, 4, [&](const std::vector<int>& counts) {
                ++splits;
                best = std::min(best, stepOf(config, counts, list));
            });
            EXPECT_EQ(splits, 165);
            auto found = searchLayerSplit(config, {.passes = list});
            ASSERT_TRUE(found.ok()) << found.error().message;
            EXPECT_TRUE(found->fits);
            EXPECT_NEAR(found->step_ms, best, best * 1e-9) << scheme << " " << passes;
            EXPECT_NEAR(stepOf(config, found->counts, list), found->step_ms, best * 1e-12);
            EXPECT_LE(found->evaluations, kLayerSplitEvaluations);
            if (found->step_ms < found->even_step_ms * (1 - 1e-9)) ++evenNotBest;
        }
    }
    // Some of the six cases need a split other than even: the search had something to find.
    EXPECT_GT(evenNotBest, 0);
}

// LLaMA-2 3B's 26 layers on eight stages with all,hide: never slower than even or balanced
// (each timed here through the plan builder), the same answer twice, and within the cap.
TEST(SearchedLayerSplit, NeverSlowerThanEvenOrBalancedAndDeterministic) {
    const std::vector<PassId> passes = passList("all,hide");
    for (const std::string scheme : {"1f1b", "chimera"}) {
        const Config config = llama3b(scheme, 8, 16);
        auto even = chainLayerCounts(config);
        auto balanced = chainLayerCounts(llama3b(scheme, 8, 16, "balanced"));
        ASSERT_TRUE(even.ok() && balanced.ok());
        auto found = searchLayerSplit(config, {.passes = passes});
        ASSERT_TRUE(found.ok()) << found.error().message;
        const double evenStep = stepOf(config, *even, passes);
        EXPECT_NEAR(found->even_step_ms, evenStep, evenStep * 1e-12);
        EXPECT_LE(found->step_ms, evenStep);
        EXPECT_LE(found->step_ms, stepOf(config, *balanced, passes));
        EXPECT_LE(found->evaluations, kLayerSplitEvaluations);
        // Another search in between replaces the one searchLayerSplit keeps: `again` runs afresh.
        ASSERT_TRUE(searchLayerSplit(config, {.passes = passes, .max_evaluations = 1}).ok());
        auto again = searchLayerSplit(config, {.passes = passes});
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(again->counts, found->counts);
        EXPECT_EQ(again->evaluations, found->evaluations);
        int sum = 0;
        for (int k : found->counts) sum += k;
        EXPECT_EQ(sum, 26);
    }
    // A cap of one evaluates the even split alone.
    auto capped = searchLayerSplit(llama3b("1f1b", 8, 16), {.passes = passes, .max_evaluations = 1});
    ASSERT_TRUE(capped.ok());
    EXPECT_EQ(capped->counts, *chainLayerCounts(llama3b("1f1b", 8, 16)));
    EXPECT_FALSE(capped->local_optimum);
}

// With reorder among the passes the search screens without it and refines the even split and
// the best few with every pass: the answer is the step of its counts with every pass, never
// slower than the even split or than the screening's own best, each run with every pass here.
TEST(SearchedLayerSplit, WithReorderRefinesTheScreenedBestAndNeverLosesToEven) {
    const std::vector<PassId> all = passList("all,hide,reorder");
    const std::vector<PassId> screening = passList("all,hide");
    for (const std::string scheme : {"1f1b", "chimera"}) {
        const Config config = llama3b(scheme, 4, 8);
        auto even = chainLayerCounts(config);
        ASSERT_TRUE(even.ok());
        auto screened = searchLayerSplit(config, {.passes = screening});
        auto found = searchLayerSplit(config, {.passes = all});
        ASSERT_TRUE(screened.ok() && found.ok()) << (found.ok() ? "" : found.error().message);
        const double evenStep = stepOf(config, *even, all);
        EXPECT_NEAR(found->even_step_ms, evenStep, evenStep * 1e-12) << scheme;
        EXPECT_NEAR(found->step_ms, stepOf(config, found->counts, all), found->step_ms * 1e-12) << scheme;
        // A fitting split ranks before a faster one over memory (LLaMA-2 3B Chimera's even split
        // peaks above the 40 GB card).
        auto evenRun = evaluateLayerSplit(config, *even, {.passes = all});
        auto screenedRun = evaluateLayerSplit(config, screened->counts, {.passes = all});
        ASSERT_TRUE(evenRun && screenedRun);
        EXPECT_TRUE(found->fits || !evenRun->fits) << scheme;
        if (evenRun->fits == found->fits) {
            EXPECT_LE(found->step_ms, evenStep) << scheme;
        }
        if (screenedRun->fits == found->fits) {
            EXPECT_LE(found->step_ms, screenedRun->step_ms * (1 + 1e-12)) << scheme;
        }
        EXPECT_TRUE(found->fits || !screenedRun->fits) << scheme;
        EXPECT_EQ(found->evaluations, screened->evaluations + 1 + std::min(kRefinedSplits, screened->evaluations - 1))
            << scheme << ": screened splits plus the even one and the best others, refined";
    }
}

// A config with "search" builds the split the search chose with the config's own passes; the
// plan written and read back keeps its layers and re-simulates to the search's step.
TEST(SearchedLayerSplit, PlanFileRecordsTheChosenCountsAndResimulatesEqual) {
    Config config = llama3b("1f1b", 4, 8, "search");
    config.model.layers = 10;
    config.passes = {"all", "hide"};
    const std::vector<PassId> passes = passList("all,hide");
    auto found = searchLayerSplit(config, {.passes = passes});
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(*chainLayerCounts(config), found->counts);
    auto plan = buildPlan(config);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    auto read = readPlan(writePlan(*plan));
    ASSERT_TRUE(read.ok()) << read.error().message;
    std::vector<int> counts;
    for (const StageSpec& stage : read->stages) counts.push_back(stage.layers->second - stage.layers->first);
    EXPECT_EQ(counts, found->counts);
    ScheduleInput input;
    input.source = *read;
    input.passes = passes;
    auto prepared = prepareSchedule(input);
    ASSERT_TRUE(prepared.ok());
    EXPECT_NEAR(prepared->result.makespan_ms, found->step_ms, found->step_ms * 1e-12);
}

TEST(SearchedLayerSplit, ConfigReaderTakesSearchAndWritesItBack) {
    const Config config = llama3b("1f1b", 8, 16, "search");
    EXPECT_EQ(config.parallel.layer_split.kind, LayerSplitKind::Search);
    EXPECT_EQ(writeConfig(config)["parallel"]["layer_split"], "search");
    nlohmann::json json = writeConfig(config);
    json["parallel"]["layer_split"] = "searched";
    auto refused = readConfig(json, kPresets);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "parallel.layer_split: expected \"even\", \"balanced\", \"search\" or an array of layer counts, one per "
              "chain position (got \"searched\")");
}

// The CLI searches once on opening a "search" config and again with the passes it runs: the second
// asks the same question and gets the first answer back, its search time included (a fresh search
// would time itself anew). A cancelled search is not kept: one cancelled before the even split
// fails, and the same search uncancelled then runs to its local optimum.
TEST(SearchedLayerSplit, TheSameSearchTwiceRunsOnceAndACancelledOneIsNotKept) {
    const std::vector<PassId> passes = passList("all,hide");
    const Config config = llama3b("1f1b", 4, 8);
    auto first = searchLayerSplit(config, {.passes = passes});
    ASSERT_TRUE(first.ok());
    auto second = searchLayerSplit(config, {.passes = passes});
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->counts, first->counts);
    EXPECT_EQ(second->search_us, first->search_us);
    // Other passes are another question.
    auto other = searchLayerSplit(config, {.passes = passList("all")});
    ASSERT_TRUE(other.ok());
    EXPECT_NE(other->search_us, first->search_us);

    const Config longer = llama3b("1f1b", 4, 12);
    std::atomic<bool> cancel{true};
    auto cancelled = searchLayerSplit(longer, {.passes = passes, .cancel = &cancel});
    EXPECT_FALSE(cancelled.ok());
    auto whole = searchLayerSplit(longer, {.passes = passes});
    ASSERT_TRUE(whole.ok());
    EXPECT_TRUE(whole->local_optimum);
    EXPECT_GT(whole->evaluations, 1);
}

// The window and a sweep stop a "search" config's search when they no longer want its plan (a
// newer edit, a cancelled sweep): buildPlan and the openers pass their stop flag down to it. Set
// before anything ran, the search has not even the even split, so the plan is refused and names
// the cancel; the same config unstopped builds the split the search chooses, and a config without
// a search ignores the flag.
TEST(SearchedLayerSplit, AStopFlagReachesTheSearchThroughBuildPlanAndTheOpeners) {
    Config config = llama3b("1f1b", 4, 10, "search");
    config.model.layers = 14;  // a search no other test has run, so that no kept answer comes back
    config.passes = {"all"};
    std::atomic<bool> stop{true};
    auto stopped = buildPlan(config, &stop);
    ASSERT_FALSE(stopped.ok());
    EXPECT_NE(stopped.error().message.find("cancelled"), std::string::npos) << stopped.error().message;

    nlohmann::json document = writeConfig(config);
    OpenedSchedule opened = openConfigDocument(document, kPresets, kRoot, "point", &stop);
    EXPECT_FALSE(opened.ok());
    EXPECT_NE(opened.error.find("cancelled"), std::string::npos) << opened.error;

    auto searched = buildPlan(config);
    ASSERT_TRUE(searched.ok()) << searched.error().message;
    auto found = searchLayerSplit(config, {.passes = passList("all")});
    ASSERT_TRUE(found.ok());
    std::vector<int> counts;
    for (const StageSpec& stage : searched->stages) counts.push_back(stage.layers->second - stage.layers->first);
    EXPECT_EQ(counts, found->counts);

    const Config even = llama3b("1f1b", 4, 10);
    EXPECT_TRUE(buildPlan(even, &stop).ok());
}

}  // namespace
}  // namespace mario
