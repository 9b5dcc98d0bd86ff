// Schedules against formulas derived by hand, not by the code under test.
#include <gtest/gtest.h>

#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

SimResult simulate(const Plan& plan) {
    EXPECT_TRUE(Validator::validate(plan).ok()) << Validator::validate(plan).summary();
    auto result = Simulator::run(plan);
    EXPECT_TRUE(result.ok());
    return *result;
}

class SynchronousSchemes : public ::testing::TestWithParam<std::tuple<Scheme, int, int>> {};

// GPipe and 1F1B with equal stages and free links: (m + p − 1)(F + B), bubble (p − 1)/(m + p − 1).
TEST_P(SynchronousSchemes, MakespanAndBubbleFollowTheClosedForm) {
    const auto [scheme, p, m] = GetParam();
    const double F = 1.5, B = 3.25;
    const SimResult r = simulate(test::unitPlan(scheme, p, m, 1, {F, B, F}));
    EXPECT_DOUBLE_EQ(r.makespan_ms, (m + p - 1) * (F + B));
    EXPECT_NEAR(r.bubble_ratio, double(p - 1) / (m + p - 1), 1e-12);
    EXPECT_DOUBLE_EQ(r.busiest_device_ms, m * (F + B));
    EXPECT_DOUBLE_EQ(r.critical_chain_ms, p * (F + B));
    EXPECT_DOUBLE_EQ(r.lower_bound_ms, std::max(m, p) * (F + B));
}

INSTANTIATE_TEST_SUITE_P(Grid, SynchronousSchemes,
                         ::testing::Combine(::testing::Values(Scheme::GPipe, Scheme::OneFOneB),
                                            ::testing::Values(2, 4, 7), ::testing::Values(1, 4, 9)),
                         [](const auto& info) {
                             return std::string(std::get<0>(info.param) == Scheme::GPipe ? "gpipe" : "onefoneb") +
                                    "_p" + std::to_string(std::get<1>(info.param)) + "_m" +
                                    std::to_string(std::get<2>(info.param));
                         });

TEST(ClosedForms, OneFOneBKeepsMinOfMAndPMinusDActivationsOnDeviceD) {
    for (int p : {2, 4, 8})
        for (int m : {1, 3, 8, 12}) {
            const SimResult r = simulate(test::unitPlan(Scheme::OneFOneB, p, m));
            for (int d = 0; d < p; ++d)
                EXPECT_DOUBLE_EQ(r.devices[d].peak_dynamic_bytes, 1000.0 * std::min(m, p - d))
                    << "p=" << p << " m=" << m << " d=" << d;
        }
}

TEST(ClosedForms, GPipeKeepsEveryMicrobatchAlive) {
    const SimResult r = simulate(test::unitPlan(Scheme::GPipe, 4, 6));
    for (const auto& device : r.devices) EXPECT_DOUBLE_EQ(device.peak_dynamic_bytes, 6000.0);
}

// Interleaved with v chunks per device: each stage costs 1/v of a device's share, so the
// bubble shrinks to (p − 1)/(m·v) of the ideal time: makespan = m(F+B) + (p − 1)(F+B)/v.
TEST(ClosedForms, InterleavedBubbleShrinksAsPMinusOneOverMV) {
    const int p = 4, m = 8;
    const double F = 1, B = 2;
    double previousBubble = 1;
    for (int v : {1, 2, 4}) {
        const Scheme scheme = v == 1 ? Scheme::OneFOneB : Scheme::Interleaved;
        const SimResult r = simulate(test::unitPlan(scheme, p, m, v, {F / v, B / v, F / v}));
        const double ideal = m * (F + B);
        EXPECT_NEAR(r.makespan_ms, ideal + (p - 1) * (F + B) / v, 1e-9) << "v=" << v;
        EXPECT_NEAR((r.makespan_ms - ideal) / ideal, double(p - 1) / (m * v), 1e-9) << "v=" << v;
        EXPECT_LT(r.bubble_ratio, previousBubble);
        previousBubble = r.bubble_ratio;
    }
}

// Chimera (Li & Hoefler, SC'21, Table 1): with N = D micro-batches and equal forward and
// backward, bubble ratio (D − 2)/(2N + D − 2); activations between D/2 + 1 and D micro-batches.
TEST(ClosedForms, ChimeraMatchesItsPapersBubbleRatioAndMemoryRange) {
    for (int D : {4, 6, 8, 16}) {
        const SimResult r = simulate(test::unitPlan(Scheme::Chimera, D, D, 1, {1, 1, 1}));
        const int N = D;
        EXPECT_NEAR(r.bubble_ratio, double(D - 2) / (2 * N + D - 2), 1e-12) << "D=" << D;
        EXPECT_DOUBLE_EQ(r.makespan_ms, 2.0 * N + D - 2) << "D=" << D;
        double least = 1e300, most = 0;
        for (const auto& device : r.devices) {
            least = std::min(least, device.peak_dynamic_bytes);
            most = std::max(most, device.peak_dynamic_bytes);
        }
        EXPECT_DOUBLE_EQ(least, 1000.0 * (D / 2 + 1)) << "D=" << D;
        EXPECT_DOUBLE_EQ(most, 1000.0 * D) << "D=" << D;
    }
}

TEST(ClosedForms, ChimeraBeatsOneFOneBWithUnequalForwardAndBackward) {
    for (int D : {4, 8, 16})
        for (int N : {D, 2 * D}) {
            const double chimera = simulate(test::unitPlan(Scheme::Chimera, D, N)).makespan_ms;
            EXPECT_LT(chimera, (N + D - 1) * 3.0) << "D=" << D << " N=" << N;
        }
}

// A link with latency L and bandwidth: every boundary crossing adds latency + bytes/bw on the
// critical path of a 1F1B pipeline with one micro-batch: p(F+B) + 2(p−1)·transfer.
TEST(ClosedForms, LinkTimeAddsOnceperBoundaryAndDirection) {
    const int p = 5;
    const LinkSpec link{0.25, 2.0};  // 2 GB/s: 1e6 bytes take 0.5 ms
    const SimResult r = simulate(test::unitPlan(Scheme::OneFOneB, p, 1, 1, {1, 2, 1, 1000, 10, 0, 1e6}, link));
    EXPECT_DOUBLE_EQ(r.makespan_ms, p * 3.0 + 2 * (p - 1) * 0.75);
}

TEST(ClosedForms, ThroughputCountsSamplesOfAllReplicas) {
    Plan plan = test::unitPlan(Scheme::OneFOneB, 2, 4);
    plan.info.micro_batch_size = 2;
    plan.info.data_parallel = 3;
    plan.info.sequence_length = 128;
    const SimResult r = simulate(plan);
    EXPECT_DOUBLE_EQ(r.samples_per_step, 4 * 2 * 3);
    EXPECT_DOUBLE_EQ(r.samples_per_s, 24 / (r.makespan_ms / 1000));
    EXPECT_DOUBLE_EQ(r.tokens_per_s, r.samples_per_s * 128);
}

}  // namespace
}  // namespace mario
