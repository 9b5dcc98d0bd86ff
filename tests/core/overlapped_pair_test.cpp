// Overlapped pairs (PyTorch's OVERLAP_F_B, DualPipe's overlapped chunks): how they are
// written, checked, timed, checkpointed, edited and exported — against hand-worked timelines
// and DualPipe's own bubble formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/io/PipeliningCsv.h"
#include "core/io/PipeliningImport.h"
#include "core/io/PlanJson.h"
#include "core/passes/PassManager.h"
#include "core/session/PlanEdit.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

Instruction action(const char* text) { return *parseAction(text); }

int pairCount(const Plan& plan) {
    int pairs = 0;
    for (const auto& device : plan.devices)
        for (const auto& ins : device.program) pairs += ins.overlapped;
    return pairs;
}

// One device, one stage (F 1 ms, B 2 ms, activations 1000 bytes): F0, (F1;B0), B1.
Plan oneDevicePair(double overlapFactor) {
    Plan plan;
    StageSpec stage;
    stage.cost.forward_ms = 1;
    stage.cost.backward_ms = 2;
    stage.cost.activation_bytes = 1000;
    plan.stages.push_back(stage);
    Instruction forward = action("0F1");
    forward.overlapped = true;
    plan.devices.push_back({0, {action("0F0"), forward, action("0B0"), action("0B1")}});
    plan.overlap_factor = overlapFactor;
    return plan;
}

TEST(OverlappedPair, ReadsAndWritesPyTorchsCompositeString) {
    auto pair = parseProgramEntry("(0F7;7B3)OVERLAP_F_B");
    ASSERT_TRUE(pair.ok()) << pair.error().message;
    ASSERT_EQ(pair->size(), 2u);
    EXPECT_EQ((*pair)[0], action("0F7"));
    EXPECT_TRUE((*pair)[0].overlapped);
    EXPECT_EQ((*pair)[1], action("7B3"));
    EXPECT_FALSE((*pair)[1].overlapped);
    EXPECT_EQ(toProgramEntries(*pair), std::vector<std::string>{"(0F7;7B3)OVERLAP_F_B"});

    auto backwardFirst = parseProgramEntry("(7I3;0F7)OVERLAP_F_B");
    ASSERT_TRUE(backwardFirst.ok());
    EXPECT_EQ(toProgramEntries(*backwardFirst), std::vector<std::string>{"(0F7;7I3)OVERLAP_F_B"});
    auto single = parseProgramEntry("2W5");
    ASSERT_TRUE(single.ok());
    EXPECT_EQ(toProgramEntries(*single), std::vector<std::string>{"2W5"});
}

TEST(OverlappedPair, RefusesCompositesThatAreNotOneForwardAndOneBackward) {
    const std::pair<const char*, const char*> cases[] = {
        {"(0F1;1F2)OVERLAP_F_B",
         "composite \"(0F1;1F2)OVERLAP_F_B\" must overlap one forward (F) with one backward (B or I)"},
        {"(0F1;1W2)OVERLAP_F_B",
         "composite \"(0F1;1W2)OVERLAP_F_B\" must overlap one forward (F) with one backward (B or I)"},
        {"(0F1;1B2)OVERLAP", "composite \"(0F1;1B2)OVERLAP\" is not of the form (0F7;7B3)OVERLAP_F_B"},
        {"(0F1)OVERLAP_F_B", "composite \"(0F1)OVERLAP_F_B\" is not of the form (0F7;7B3)OVERLAP_F_B"},
        {"(0F1;xB2)OVERLAP_F_B",
         "composite \"(0F1;xB2)OVERLAP_F_B\": instruction \"xB2\" does not start with a stage number"},
    };
    for (const auto& [text, message] : cases) {
        auto parsed = parseProgramEntry(text);
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_EQ(parsed.error().message, message);
    }
}

// Hand-worked: F0 [0, 1]; the pair takes 1 + 2 − φ·min(1, 2) = 3 − φ, split 1 : 2 between
// its halves; B1 follows. Memory: two activation sets before B0 frees one, as in sequence.
TEST(OverlappedPair, TakesTheSumLessTheHiddenShareOfTheShorterHalf) {
    for (double phi : {0.0, 0.5, 1.0}) {
        const Plan plan = oneDevicePair(phi);
        ASSERT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
        auto result = Simulator::run(plan);
        ASSERT_TRUE(result.ok());
        const double pair = 3 - phi;
        EXPECT_DOUBLE_EQ(result->makespan_ms, 1 + pair + 2);
        const auto& t = result->devices[0].timings;
        EXPECT_DOUBLE_EQ(t[1].start, 1);
        EXPECT_DOUBLE_EQ(t[1].end, 1 + pair / 3);
        EXPECT_DOUBLE_EQ(t[2].start, 1 + pair / 3);
        EXPECT_DOUBLE_EQ(t[2].end, 1 + pair);
        EXPECT_DOUBLE_EQ(result->devices[0].busy_ms, 1 + pair + 2);
        EXPECT_DOUBLE_EQ(result->devices[0].peak_dynamic_bytes, 2000);
    }
}

TEST(OverlappedPair, ValidatorNamesAPairWithoutItsBackward) {
    Plan plan = oneDevicePair(0);
    std::swap(plan.devices[0].program[2], plan.devices[0].program[3]);  // F1 pairs with B1 now: fine
    EXPECT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();

    plan = oneDevicePair(0);
    plan.devices[0].program[0].overlapped = true;  // F0 is followed by F1
    EXPECT_EQ(Validator::validate(plan).summary(),
              "devices[0].program[0]: \"0F0\" opens an overlapped pair, but \"0F1\" follows it (a pair needs a "
              "backward, B or I, right after its forward)");

    plan = oneDevicePair(0);
    plan.devices[0].program[1].overlapped = false;
    plan.devices[0].program[3].overlapped = true;
    EXPECT_EQ(Validator::validate(plan).summary(),
              "devices[0].program[3]: \"0B1\" is marked overlapped; only a forward opens a pair");
}

// DualPipe's README: (PP/2 − 1)(F&B + B − 3W) of bubble, F&B being an overlapped pair's time
// and B a whole backward. Unit costs F = I = W = 1 (B = 2): F&B = 3 − φ.
TEST(OverlappedPair, DualPipeIdlesAsItsReadmeSays) {
    for (int p : {4, 6, 8})
        for (double phi : {0.0, 0.5}) {
            Plan plan = test::unitPlan(Scheme::DualPipe, p, 4 * p);
            plan.overlap_factor = phi;
            ASSERT_GT(pairCount(plan), 0);
            ASSERT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
            SimOptions options;
            options.summary = true;
            auto result = Simulator::run(plan, options);
            ASSERT_TRUE(result.ok());
            const double expected = (p / 2 - 1) * ((3 - phi) + 2 - 3 * 1);
            double most = 0;
            for (const auto& device : result->devices) {
                most = std::max(most, device.idle_ms);
                if (phi == 0) {
                    EXPECT_NEAR(device.idle_ms, expected, 1e-9) << "p " << p << " device " << device.index;
                }
            }
            EXPECT_NEAR(most, expected, 1e-9) << "p " << p << " overlap " << phi;
            EXPECT_LE(result->tight_lower_bound_ms, result->makespan_ms + 1e-9);
        }
}

TEST(OverlappedPair, PlanFileKeepsPairsAndOverlapFactor) {
    Plan plan = test::unitPlan(Scheme::DualPipeV, 4, 16);
    plan.overlap_factor = 0.25;
    const auto json = writePlan(plan);
    const auto& program = json["devices"][0]["program"];
    EXPECT_TRUE(std::any_of(program.begin(), program.end(), [](const auto& entry) {
        return entry.template get<std::string>().find("OVERLAP_F_B") != std::string::npos;
    }));
    auto reread = readPlan(json);
    ASSERT_TRUE(reread.ok()) << reread.error().message;
    EXPECT_EQ(pairCount(*reread), pairCount(plan));
    EXPECT_DOUBLE_EQ(reread->overlap_factor, 0.25);
    EXPECT_DOUBLE_EQ(Simulator::run(*reread)->makespan_ms, Simulator::run(plan)->makespan_ms);
}

// Mario's passes: every R goes before its pair, pairs stay whole, and the paper's passes are
// never slower than checkpointing alone.
TEST(OverlappedPair, PassesKeepEveryPairWhole) {
    for (Scheme scheme : {Scheme::DualPipe, Scheme::DualPipeV})
        for (const char* list : {"checkpoint", "all", "all,hide"}) {
            Plan plan = test::unitPlan(scheme, 4, 16);
            plan.overlap_factor = 0.5;
            const int pairs = pairCount(plan);
            auto passes = parsePassList(list);
            ASSERT_TRUE(passes.ok());
            ASSERT_TRUE(runPasses(plan, *passes).ok());
            EXPECT_EQ(pairCount(plan), pairs) << schemeName(scheme) << " " << list;
            EXPECT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
        }
}

TEST(OverlappedPair, DraggingEitherHalfMovesThePairWithItsCommunication) {
    const Plan plan = test::unitPlan(Scheme::DualPipeV, 2, 4);
    const auto& program = plan.devices[0].program;
    const auto forward =
        std::find_if(program.begin(), program.end(), [](const Instruction& i) { return i.overlapped; });
    ASSERT_NE(forward, program.end());
    const int f = static_cast<int>(forward - program.begin());
    const auto [first, last] = movingGroup(program, f + 1);
    EXPECT_EQ(movingGroup(program, f), std::make_pair(first, last));
    EXPECT_LE(first, f);
    EXPECT_GE(last, f + 2);
    for (int k = first; k < last; ++k)
        if (k != f && k != f + 1) {
            EXPECT_TRUE(isCommunication(program[k].op)) << toActionString(program[k]);
        }

    // Something dropped between the halves splits the pair: refused, with the reason.
    auto movable = [&](int k) {
        const bool inPair = program[k].overlapped || (k > 0 && program[k - 1].overlapped);
        return (k < first || k >= last) && (program[k].op == Op::Forward || program[k].op == Op::Backward) && !inPair;
    };
    int other = 0;
    while (other < static_cast<int>(program.size()) && !movable(other)) ++other;
    ASSERT_LT(other, static_cast<int>(program.size()));
    auto split = moveInstruction(plan, {0, other, f + 1});
    ASSERT_FALSE(split.ok());
    EXPECT_NE(split.error().message.find("opens an overlapped pair"), std::string::npos) << split.error().message;
}

// Exported as PyTorch writes it, both formats; import reads the same pairs back.
TEST(OverlappedPair, CsvExportAndImportKeepPairs) {
    const Plan plan = test::unitPlan(Scheme::DualPipeV, 4, 8);
    for (auto format : {PipeliningCsvFormat::ComputeOnly, PipeliningCsvFormat::ComputeComms}) {
        auto csv = toPipeliningCsv(plan, {format, false});
        ASSERT_TRUE(csv.ok()) << csv.error().message;
        auto parsed = parsePipeliningCsv(*csv);
        ASSERT_TRUE(parsed.ok()) << parsed.error().message;
        EXPECT_EQ(parsed->overlap_cells, pairCount(plan));
        auto imported = importPipeliningCsv(*parsed, "dualpipev");
        ASSERT_TRUE(imported.ok()) << imported.error().message;
        EXPECT_EQ(pairCount(imported->plan), pairCount(plan));
        EXPECT_DOUBLE_EQ(Simulator::run(imported->plan)->makespan_ms, Simulator::run(plan)->makespan_ms);
    }
}

}  // namespace
}  // namespace mario
