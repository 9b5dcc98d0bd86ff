// The pass table is the one list of passes: every entry runs through the one signature on a
// real plan, has its names, label, tooltip and caption, and the vocabulary, the CLI's parser
// and the tuner read their lists from it.
#include <gtest/gtest.h>

#include <set>

#include "core/passes/PassManager.h"
#include "core/passes/PassRegistry.h"
#include "core/passes/Passes.h"
#include "core/passes/StepCaption.h"
#include "core/sim/Simulator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

TEST(PassRegistry, EveryPassHasItsNamesLabelAndTooltip) {
    std::set<std::string_view> names;
    std::set<PassId> ids;
    for (const PassInfo& info : passTable()) {
        EXPECT_TRUE(ids.insert(info.id).second) << info.name << " listed twice";
        EXPECT_TRUE(names.insert(info.name).second && names.insert(info.long_name).second) << info.name;
        EXPECT_FALSE(info.label.empty() || info.tooltip.empty()) << info.name;
        EXPECT_EQ(parsePassName(info.name), info.id);
        EXPECT_EQ(parsePassName(info.long_name), info.id);
        EXPECT_EQ(passName(info.id), info.name);
        EXPECT_EQ(&passInfo(info.id), &info);
        EXPECT_TRUE(info.run != nullptr) << info.name;
    }
    EXPECT_EQ(allPasses().size(), passTable().size());
    // "all" is the paper's four, in the paper's order.
    EXPECT_EQ(paperPasses(),
              (std::vector<PassId>{PassId::Checkpoint, PassId::Overlap, PassId::Redundancy, PassId::Prepose}));
    EXPECT_EQ(*parsePassList("all"), paperPasses());
}

// A pass list reads names, "all" (the paper's four) and "none" (no pass); "none" beside another
// name is two contradictory lists and is refused in one line, where it used to mean the other
// passes ("none,all" ran all: a sweep's user who meant the pass sets none;all saw one of them).
TEST(PassRegistry, NoneStandsAloneInAPassList) {
    EXPECT_TRUE(parsePassList("none")->empty());
    EXPECT_TRUE(parsePassList(" NONE ")->empty());
    EXPECT_TRUE(parsePassList("")->empty());
    EXPECT_EQ(*parsePassList("all,hide"), (std::vector<PassId>{PassId::Checkpoint, PassId::Overlap, PassId::Redundancy,
                                                               PassId::Prepose, PassId::Hide}));
    for (const char* list : {"none,all", "checkpoint,none", "none, hide", "all,none"}) {
        auto parsed = parsePassList(list);
        ASSERT_FALSE(parsed.ok()) << list;
        EXPECT_NE(parsed.error().message.find("\"none\" cannot be listed with other passes"), std::string::npos)
            << parsed.error().message;
        EXPECT_EQ(parsed.error().message.find('\n'), std::string::npos);
    }
    EXPECT_FALSE(parsePassNames({"none", "checkpoint"}).ok());  // a config's "passes" array too
}

// Figure 2 checkpointed, each pass run alone through the table's signature: each changes the
// plan where it should, and its step reads as a sentence ending with the step times.
TEST(PassRegistry, EveryPassRunsThroughTheOneSignatureAndHasACaption) {
    for (const PassInfo& info : passTable()) {
        Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 4);
        plan.info.memory_limit_bytes = 1e6;  // room for relax and hide to keep activations
        const auto before = Simulator::run(plan);
        if (info.id != PassId::Checkpoint) applyCheckpoint(plan);
        const std::vector<PassId> selected{info.id};
        PassContext context;
        context.selected = &selected;
        context.caps.assign(plan.devices.size(), 1e6);
        context.prepose_budget = 64;
        auto report = info.run(plan, context);
        ASSERT_TRUE(report.ok()) << info.name << ": " << report.error().message;
        EXPECT_EQ(report->pass, info.id);
        const auto after = Simulator::run(plan);
        ASSERT_TRUE(before.ok() && after.ok());
        const std::string caption = captionForStep(*report, plan, *before, *after);
        EXPECT_NE(caption.find(" ms."), std::string::npos) << info.name << ": " << caption;
        EXPECT_GT(caption.size(), 30u) << info.name;
    }
}

TEST(PassRegistry, TheTunersListsAreTheTables) {
    std::vector<PassId> screening, refining;
    for (const PassInfo& info : passTable()) {
        if (info.tuner_screens) screening.push_back(info.id);
        if (info.tuner_refines) refining.push_back(info.id);
    }
    EXPECT_EQ(tunerPasses(false), screening);
    EXPECT_EQ(tunerPasses(true), refining);
    // Refining does at least what screening does.
    for (PassId pass : screening) EXPECT_NE(std::find(refining.begin(), refining.end(), pass), refining.end());
}

}  // namespace
}  // namespace mario
