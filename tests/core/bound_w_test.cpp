// Bound-w: split-backward schedules with checkpointing keep their deferred Ws' memory, and
// the pass runs Ws earlier until no device passes the plan's balanced peak. Checked against
// checkpointed 1F1B's peak in closed form: device d holds p − d checkpoints, and one full
// activation set while it recomputes, so (p − d)·c + (a − c) at most.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/passes/PassManager.h"
#include "core/passes/Passes.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

constexpr double kActivation = 1000, kCheckpoint = 10;

Plan withPasses(Scheme scheme, int p, int m, const char* list, int chunks = 1) {
    Plan plan = test::unitPlan(scheme, p, m, chunks);
    auto passes = parsePassList(list);
    EXPECT_TRUE(passes.ok());
    auto run = runPasses(plan, *passes);
    EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.error().message);
    EXPECT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
    return plan;
}

double highestPeak(const Plan& plan) {
    auto result = Simulator::run(plan);
    EXPECT_TRUE(result.ok());
    double peak = 0;
    for (const auto& device : result->devices) peak = std::max(peak, device.peak_dynamic_bytes);
    return peak;
}

TEST(BoundW, CheckpointedOneFOneBPeaksAsTheClosedFormSays) {
    for (int p : {2, 4, 8}) {
        const Plan plan = withPasses(Scheme::OneFOneB, p, 2 * p, "checkpoint");
        EXPECT_DOUBLE_EQ(highestPeak(plan), p * kCheckpoint + (kActivation - kCheckpoint)) << p;
    }
}

// Without the pass, deferred Ws lift the zero-bubble schedules above their own in-flight
// count's checkpointed peak: micro-batches between F and I on the first device, p for ZB-H1
// (as 1F1B), 2p − 1 for ZB-H2, 2p stage-sets for ZBV (new_schedules_test checks these
// unsplit). With it, no device passes that peak, and every W still follows its I.
TEST(BoundW, ZeroBubbleSchedulesFitTheirInFlightCheckpointedPeak) {
    struct Case {
        Scheme scheme;
        int (*inFlight)(int p);
    };
    const Case cases[] = {{Scheme::ZbH1, [](int p) { return p; }},
                          {Scheme::ZbH2, [](int p) { return 2 * p - 1; }},
                          {Scheme::Zbv, [](int p) { return 2 * p; }}};
    for (const Case& c : cases)
        for (int p : {4, 8}) {
            const int m = 4 * p;
            const double expected = c.inFlight(p) * kCheckpoint + (kActivation - kCheckpoint);
            const Plan loose = withPasses(c.scheme, p, m, "checkpoint");
            const Plan bounded = withPasses(c.scheme, p, m, "checkpoint,bound-w");
            EXPECT_GT(highestPeak(loose), expected) << schemeName(c.scheme) << " p=" << p;
            EXPECT_DOUBLE_EQ(highestPeak(bounded), expected) << schemeName(c.scheme) << " p=" << p;
        }
}

// ZB-H1 runs 1F1B's in-flight count: bounded, it needs no more memory than checkpointed 1F1B.
TEST(BoundW, ZbH1FitsCheckpointedOneFOneB) {
    for (int p : {4, 8}) {
        const double oneFOneB = highestPeak(withPasses(Scheme::OneFOneB, p, 4 * p, "all"));
        EXPECT_LE(highestPeak(withPasses(Scheme::ZbH1, p, 4 * p, "all,bound-w")), oneFOneB + 1e-9) << p;
    }
}

// Whatever the schedule, the pass keeps every device within its budget when deferred Ws are
// what lifts it (interleaved zero-bubble, DualPipe's drain).
TEST(BoundW, EveryDeviceEndsWithinTheBudget) {
    for (auto [scheme, chunks] :
         {std::pair{Scheme::InterleavedZb, 2}, std::pair{Scheme::DualPipeV, 1}, std::pair{Scheme::DualPipe, 1}}) {
        Plan plan = withPasses(scheme, 4, 16, "all", chunks);
        const double budget = boundWBudget(plan).front();
        boundWeightGradients(plan, boundWBudget(plan));
        EXPECT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
        EXPECT_LE(highestPeak(plan), budget + 1e-9) << schemeName(scheme);
    }
}

TEST(BoundW, MovesOnlyWsAndOnlyEarlier) {
    Plan plan = withPasses(Scheme::ZbH1, 4, 16, "checkpoint");
    const auto report = boundWeightGradients(plan, boundWBudget(plan));
    ASSERT_TRUE(report.changed());
    for (const auto& change : report.changes) {
        EXPECT_EQ(change.kind, ChangeKind::Moved);
        EXPECT_EQ(change.instruction.op, Op::BackwardWeight);
        EXPECT_LT(change.to_index, change.from_index);
    }
    EXPECT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
}

TEST(BoundW, AMemoryLimitAboveTheBalancedPeakLetsWsStayDeferred) {
    Plan plan = withPasses(Scheme::ZbH1, 4, 16, "checkpoint");
    const double balanced = boundWBudget(plan).front();
    const double limit = balanced + 2 * kActivation;
    plan.info.memory_limit_bytes = limit;
    EXPECT_DOUBLE_EQ(boundWBudget(plan).front(), limit);
    Plan tight = plan;
    tight.info.memory_limit_bytes.reset();
    const auto roomy = boundWeightGradients(plan, boundWBudget(plan));
    const auto strict = boundWeightGradients(tight, boundWBudget(tight));
    EXPECT_LT(roomy.changes.size(), strict.changes.size());
    EXPECT_LE(highestPeak(plan), limit + 1e-9);
}

TEST(BoundW, ChangesNothingWithoutSplitBackward) {
    for (Scheme scheme : {Scheme::OneFOneB, Scheme::Chimera, Scheme::GPipe}) {
        Plan plan = withPasses(scheme, 4, 8, "all");
        EXPECT_FALSE(boundWeightGradients(plan, boundWBudget(plan)).changed()) << schemeName(scheme);
    }
}

TEST(BoundW, IsNamedAndBeyondThePaper) {
    EXPECT_EQ(passName(PassId::BoundW), "bound-w");
    EXPECT_EQ(parsePassName("bound-weight-gradients"), PassId::BoundW);
    EXPECT_TRUE(isBeyondPaper(PassId::BoundW));
    auto list = parsePassList("all");
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(std::count(list->begin(), list->end(), PassId::BoundW), 0);
}

}  // namespace
}  // namespace mario
