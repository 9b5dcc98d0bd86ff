// The schedules of the zero-bubble family, the V shapes and DualPipe: their orders against
// traces of the published algorithms, their bubbles and memory against the closed forms of
// their papers, and Mario's passes on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/passes/PassManager.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/SourceTraces.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

std::string joined(const std::vector<Instruction>& program) {
    std::string text;
    for (const Instruction& ins : program) {
        if (!text.empty()) text += ',';
        text += toActionString(ins);
    }
    return text;
}

SimResult simulate(const Plan& plan) {
    const auto issues = Validator::validate(plan);
    EXPECT_TRUE(issues.ok()) << issues.summary();
    auto result = Simulator::run(plan);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    EXPECT_FALSE(result->deadlocked);
    return *result;
}

// Per device: from its first computation's start to its last one's end.
double spanOf(const Plan& plan, const SimResult& result, int d) {
    double first = 1e300, last = 0;
    const auto& program = plan.devices[d].program;
    for (std::size_t i = 0; i < program.size(); ++i)
        if (isCompute(program[i].op) && result.devices[d].timings[i].end > result.devices[d].timings[i].start) {
            first = std::min(first, result.devices[d].timings[i].start);
            last = std::max(last, result.devices[d].timings[i].end);
        }
    return last - first;
}

struct Traced {
    Scheme scheme;
    int chunks;
    const std::array<std::string_view, 4>* trace;
};

class SourceOrders : public ::testing::TestWithParam<Traced> {};

TEST_P(SourceOrders, GeneratorFollowsThePublishedAlgorithm) {
    const Traced& t = GetParam();
    auto order = generateComputeOrder(ScheduleShape{t.scheme, 4, t.chunks, 8});
    ASSERT_TRUE(order.ok()) << order.error().message;
    ASSERT_EQ(order->size(), 4u);
    for (int d = 0; d < 4; ++d)
        EXPECT_EQ(joined((*order)[d]), (*t.trace)[d]) << schemeName(t.scheme) << " device " << d;
}

INSTANTIATE_TEST_SUITE_P(FourDevicesEightMicrobatches, SourceOrders,
                         ::testing::Values(Traced{Scheme::ZbH1, 1, &test::traces::kZbH1},
                                           Traced{Scheme::ZbH2, 1, &test::traces::kZbH2},
                                           Traced{Scheme::Zbv, 1, &test::traces::kZbv},
                                           Traced{Scheme::DualPipeV, 1, &test::traces::kDualPipeV},
                                           Traced{Scheme::DualPipe, 1, &test::traces::kDualPipe},
                                           Traced{Scheme::LoopedBfs, 2, &test::traces::kLoopedBfs},
                                           Traced{Scheme::InterleavedZb, 2, &test::traces::kInterleavedZb}),
                         [](const auto& info) {
                             std::string name(schemeName(info.param.scheme));
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

// Zero Bubble Pipeline Parallelism, §2: with free links, 1F1B idles (p − 1)(F + I + W) per
// device, ZB-H1 (p − 1)(F + I − W); the step is the work m(F + I + W) plus that bubble.
TEST(ZeroBubble, H1BubbleIsPMinusOneTimesFPlusIMinusW) {
    for (int p : {2, 4, 6})
        for (int m : {p, 2 * p, 3 * p + 1}) {
            const double F = 1, I = 1, W = 1;
            test::UnitStage unit{F, I + W, F};
            unit.input = I;
            unit.weight = W;
            const SimResult zb = simulate(test::unitPlan(Scheme::ZbH1, p, m, 1, unit));
            const SimResult base = simulate(test::unitPlan(Scheme::OneFOneB, p, m, 1, unit));
            EXPECT_DOUBLE_EQ(zb.makespan_ms, m * (F + I + W) + (p - 1) * (F + I - W)) << "p=" << p << " m=" << m;
            EXPECT_DOUBLE_EQ(base.makespan_ms, m * (F + I + W) + (p - 1) * (F + I + W)) << "p=" << p << " m=" << m;
        }
}

// ZB-H2 idles (p − 1)(F + I − 2W) per device from the device's own start: none when F = I = W.
TEST(ZeroBubble, H2NeverIdlesAfterItsFirstForwardWhenFIWAreEqual) {
    for (int p : {2, 4, 5})
        for (int m : {2 * p - 1, 3 * p}) {
            const Plan plan = test::unitPlan(Scheme::ZbH2, p, m);
            const SimResult r = simulate(plan);
            for (int d = 0; d < p; ++d)
                EXPECT_DOUBLE_EQ(spanOf(plan, r, d), 3.0 * m) << "p=" << p << " m=" << m << " d=" << d;
        }
}

// What a micro-batch keeps from F to I (W keeps nothing here): ZB-H1 keeps 1F1B's p − d
// micro-batches in flight on device d, ZB-H2 2(p − d) − 1, so 2p − 1 on the first device.
TEST(ZeroBubble, ActivationsInFlightMatchTheirPapers) {
    test::UnitStage unit;
    unit.weightGradBytes = 0;
    const int p = 4, m = 12;
    const SimResult h1 = simulate(test::unitPlan(Scheme::ZbH1, p, m, 1, unit));
    const SimResult h2 = simulate(test::unitPlan(Scheme::ZbH2, p, m, 1, unit));
    for (int d = 0; d < p; ++d) {
        EXPECT_DOUBLE_EQ(h1.devices[d].peak_dynamic_bytes, 1000.0 * (p - d)) << d;
        EXPECT_DOUBLE_EQ(h2.devices[d].peak_dynamic_bytes, 1000.0 * (2 * (p - d) - 1)) << d;
    }
}

// ZBV (Pipeline Parallelism with Controllable Memory): with F = I = W no device idles after
// it starts, and each holds at most 2p half-size stages until their W, 1F1B's first-device peak.
TEST(ZeroBubble, ZbvHasNoBubbleAndOneFOneBsPeak) {
    for (int p : {2, 4, 6})
        for (int m : {2 * p, 3 * p}) {
            test::UnitStage unit;
            unit.weightGradBytes = unit.activation;  // held until W
            const Plan plan = test::unitPlan(Scheme::Zbv, p, m, 1, unit);
            const SimResult r = simulate(plan);
            for (int d = 0; d < p; ++d) {
                EXPECT_DOUBLE_EQ(spanOf(plan, r, d), 2 * 3.0 * m) << "p=" << p << " m=" << m << " d=" << d;
                EXPECT_LE(r.devices[d].peak_dynamic_bytes, 1000.0 * 2 * p) << "p=" << p << " m=" << m << " d=" << d;
            }
            EXPECT_DOUBLE_EQ(r.devices[0].peak_dynamic_bytes, 1000.0 * 2 * p) << "p=" << p << " m=" << m;
        }
}

// DualPipe's README: PP + 1 activation sets on every device (DualPipeV: 2p + 1 stages' worth).
TEST(DualPipe, KeepsPPPlusOneActivationSets) {
    for (int p : {2, 4, 8}) {
        test::UnitStage unit;
        unit.weightGradBytes = unit.activation;
        const SimResult dual = simulate(test::unitPlan(Scheme::DualPipe, p, 2 * p + 4, 1, unit));
        const SimResult v = simulate(test::unitPlan(Scheme::DualPipeV, p, 2 * p + 4, 1, unit));
        for (int d = 0; d < p; ++d) {
            EXPECT_DOUBLE_EQ(dual.devices[d].peak_dynamic_bytes, 1000.0 * (p + 1)) << "p=" << p << " d=" << d;
            EXPECT_DOUBLE_EQ(v.devices[d].peak_dynamic_bytes, 1000.0 * (2 * p + 1)) << "p=" << p << " d=" << d;
        }
    }
}

// A program as PyTorch writes it: an overlapped forward and the backward after it are one
// cell, "(0F3;3B1)".
std::string asPyTorchCells(const std::vector<Instruction>& program) {
    std::string text;
    for (std::size_t i = 0; i < program.size(); ++i) {
        if (!text.empty()) text += ',';
        if (program[i].overlapped && i + 1 < program.size()) {
            text += "(" + toActionString(program[i]) + ";" + toActionString(program[i + 1]) + ")";
            ++i;
        } else {
            text += toActionString(program[i]);
        }
    }
    return text;
}

// PyTorch's ScheduleDualPipeV builds any count from 2p, odd ones too: every micro-batch walks
// the whole V, so nothing halves the batch. P = 2, M = 5, worked by hand through its eight
// steps (_calculate_single_rank_operations). Rank 0 (stages 0 and 3): step 1 two F0s, step 2
// one F0F1, step 3 one I1 W F1, step 4 M - 2P + 1 = 2 paired rounds, step 5 one B1 and pair,
// step 6 B1 then (zero bubble from here) I0, step 7 W I0, step 8 W. Rank 1 (stages 1 and 2):
// step 2 twice, step 4 three rounds (the first unpaired, rank P - 1), step 6 B1 B0 then I1 I0,
// step 8 two Ws.
TEST(DualPipe, VTakesAnOddMicrobatchCountAsPyTorchBuildsIt) {
    ASSERT_TRUE(checkShape(ScheduleShape{Scheme::DualPipeV, 2, 1, 5}).ok());
    auto order = generateComputeOrder(ScheduleShape{Scheme::DualPipeV, 2, 1, 5});
    ASSERT_TRUE(order.ok()) << order.error().message;
    ASSERT_EQ(order->size(), 2u);
    EXPECT_EQ(asPyTorchCells((*order)[0]),
              "0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1),(3F2;0B0),(0F4;3B2),(3F3;0B1),3B3,(3F4;0B2),3B4,0I3,"
              "0W3,0I4,0W4");
    EXPECT_EQ(asPyTorchCells((*order)[1]),
              "1F0,2F0,1F1,2F1,1F2,2B0,(2F2;1B0),(1F3;2B1),(2F3;1B1),(1F4;2B2),(2F4;1B2),2B3,1B3,2I4,1I4,2W4,"
              "1W4");
    // It validates and runs to the end.
    simulate(test::unitPlan(Scheme::DualPipeV, 2, 5));
    // Fewer than 2p are still refused, as PyTorch refuses them.
    const auto few = checkShape(ScheduleShape{Scheme::DualPipeV, 2, 1, 3});
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.error().message.find("at least 4 micro-batches"), std::string::npos) << few.error().message;
    // DualPipe halves the batch between its directions: odd counts stay refused there.
    EXPECT_FALSE(checkShape(ScheduleShape{Scheme::DualPipe, 2, 1, 5}).ok());
}

TEST(Placement, VPutsStagesDAndTwoPMinusOneMinusDOnDeviceD) {
    const PipelineLayout layout = pipelineLayout(ScheduleShape{Scheme::Zbv, 4, 1, 8});
    ASSERT_EQ(layout.stage_device.size(), 8u);
    ASSERT_EQ(layout.chains.size(), 1u);
    for (int d = 0; d < 4; ++d) {
        EXPECT_EQ(layout.stage_device[d], d);
        EXPECT_EQ(layout.stage_device[7 - d], d);
    }
}

// At the V's turn stages p − 1 and p share a device: no SEND/RECV carries the data, so the
// validator checks their order itself.
TEST(Placement, ValidatorRejectsATurnInTheWrongOrder) {
    Plan plan = test::unitPlan(Scheme::Zbv, 2, 4);
    auto& program = plan.devices[1].program;
    const auto first = std::find(program.begin(), program.end(), Instruction{Op::Forward, 1, 0});
    const auto second = std::find(program.begin(), program.end(), Instruction{Op::Forward, 2, 0});
    ASSERT_TRUE(first != program.end() && second != program.end());
    std::iter_swap(first, second);
    const auto issues = Validator::validate(plan);
    ASSERT_FALSE(issues.ok());
    EXPECT_NE(issues.summary().find("\"2F0\" comes before \"1F0\", whose output it needs (both on device 1)"),
              std::string::npos)
        << issues.summary();
}

struct Sized {
    Scheme scheme;
    int chunks;
};

class EveryNewScheme : public ::testing::TestWithParam<Sized> {};

// Every size the shape check accepts gives a valid plan that runs to the end; the paper's
// passes (and hide) keep it valid and are never slower than checkpointing alone.
TEST_P(EveryNewScheme, GeneratesValidPlansThatPassesImprove) {
    const auto [scheme, chunks] = GetParam();
    for (int p : {1, 2, 3, 4, 6})
        for (int m : {1, 2, 3, 4, 7, 8, 12, 16}) {
            if (!checkShape(ScheduleShape{scheme, p, chunks, m})) continue;
            const std::string where =
                std::string(schemeName(scheme)) + " p=" + std::to_string(p) + " m=" + std::to_string(m);
            const Plan plan = test::unitPlan(scheme, p, m, chunks);
            const SimResult plain = simulate(plan);
            EXPECT_GT(plain.makespan_ms, 0) << where;
            auto checkpointOnly = plan;
            ASSERT_TRUE(runPasses(checkpointOnly, *parsePassList("checkpoint")).ok()) << where;
            const double ckpt = simulate(checkpointOnly).makespan_ms;
            for (const char* list : {"all", "all,hide"}) {
                auto passed = plan;
                ASSERT_TRUE(runPasses(passed, *parsePassList(list)).ok()) << where << " " << list;
                EXPECT_LE(simulate(passed).makespan_ms, ckpt + 1e-9) << where << " " << list;
            }
        }
}

INSTANTIATE_TEST_SUITE_P(Schemes, EveryNewScheme,
                         ::testing::Values(Sized{Scheme::LoopedBfs, 2}, Sized{Scheme::ZbH1, 1}, Sized{Scheme::ZbH2, 1},
                                           Sized{Scheme::InterleavedZb, 2}, Sized{Scheme::Zbv, 1},
                                           Sized{Scheme::DualPipeV, 1}, Sized{Scheme::DualPipe, 1}),
                         [](const auto& info) {
                             std::string name(schemeName(info.param.scheme));
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

}  // namespace
}  // namespace mario
