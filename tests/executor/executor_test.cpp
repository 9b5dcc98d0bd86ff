// The CPU executor computes what a plain single-device run computes, for every scheme with and
// without Mario's passes, and fails with a clear message instead of hanging.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <tuple>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/LiveEvents.h"
#include "core/io/PlanJson.h"
#include "core/schedule/PipelineTopology.h"
#include "core/sim/ProgramMemory.h"
#include "core/util/ExitCode.h"
#include "executor/Backend.h"
#include "executor/Executor.h"
#include "tests/common/ScratchDir.h"
#include "tests/common/UnitPlans.h"
#include "tests/executor/ReferenceChecks.h"
#include "tests/executor/RunCli.h"

namespace {

using mario::Scheme;

struct Case {
    const char* name;
    Scheme scheme;
    int devices, microbatches, chunks;
    bool passes;
    const char* passList = "all";  // when `passes`
};

mario::Plan makePlan(const Case& c) {
    auto plan = c.passes
                    ? mario::test::makeUnitPlanWithPasses(c.scheme, c.devices, c.microbatches, c.chunks, c.passList)
                    : mario::test::makeUnitPlan(c.scheme, c.devices, c.microbatches, c.chunks);
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().message);
    return std::move(plan).value();
}

class ReferenceEquality : public ::testing::TestWithParam<Case> {};

TEST_P(ReferenceEquality, LossAndEveryGradientMatchTheSingleDeviceRun) {
    const mario::Plan plan = makePlan(GetParam());
    auto options = mario::test::referenceOptions();
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    mario::test::expectMatchesReference(*report);
    EXPECT_EQ(report->devices, GetParam().devices);
    // 8 blocks × 12 tensors + token and position embeddings + final norm (2) + head (2).
    EXPECT_EQ(report->compared_parameters, 8u * 12 + 2 + 4);
}

TEST_P(ReferenceEquality, LiveActivationsPeakWhereTheSimulatorSays) {
    // Unit plans have no static bytes, so the program peak is the activation peak.
    const mario::Plan plan = makePlan(GetParam());
    const mario::exec::ExecutorOptions
        defaults;  // named: GCC 12 misreads a braced temporary here (-Wmaybe-uninitialized)
    auto report = mario::exec::runPlan(plan, defaults);
    ASSERT_TRUE(report.ok()) << report.error().message;
    ASSERT_EQ(report->peak_activation_bytes.size(), plan.devices.size());
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        EXPECT_DOUBLE_EQ(report->peak_activation_bytes[d], mario::programPeakBytes(plan, static_cast<int>(d)))
            << "device " << d;
}

const Case kCases[] = {
    {"gpipe", Scheme::GPipe, 4, 4, 1, false},
    {"gpipe_passes", Scheme::GPipe, 4, 4, 1, true},
    {"onefoneb", Scheme::OneFOneB, 4, 4, 1, false},
    {"onefoneb_passes", Scheme::OneFOneB, 4, 4, 1, true},
    {"interleaved", Scheme::Interleaved, 2, 4, 2, false},
    {"interleaved_passes", Scheme::Interleaved, 2, 4, 2, true},
    {"chimera", Scheme::Chimera, 4, 4, 1, false},
    {"chimera_passes", Scheme::Chimera, 4, 4, 1, true},
    // Hide-recompute moves Rs into earlier bubbles and drops some: gradients must not change,
    // and the activation peaks must still be what the simulator says.
    {"gpipe_hide", Scheme::GPipe, 4, 4, 1, true, "all,hide"},
    {"onefoneb_hide", Scheme::OneFOneB, 4, 8, 1, true, "all,hide"},
    {"interleaved_hide", Scheme::Interleaved, 2, 4, 2, true, "all,hide"},
    {"chimera_hide", Scheme::Chimera, 4, 4, 1, true, "all,hide"},
    // Split backward (I now, W later from the graph I keeps), V placement with its turn on
    // one device, and DualPipe's two weight copies.
    {"bfs", Scheme::LoopedBfs, 2, 4, 2, false},
    {"zb_h1", Scheme::ZbH1, 4, 8, 1, false},
    {"zb_h1_passes", Scheme::ZbH1, 4, 8, 1, true},
    {"zb_h2_hide", Scheme::ZbH2, 4, 8, 1, true, "all,hide"},
    {"interleaved_zb_passes", Scheme::InterleavedZb, 2, 4, 2, true},
    {"zbv", Scheme::Zbv, 2, 4, 1, false},
    {"zbv_passes", Scheme::Zbv, 2, 4, 1, true},
    {"dualpipev_passes", Scheme::DualPipeV, 2, 4, 1, true},
    {"dualpipe", Scheme::DualPipe, 2, 4, 1, false},
    {"dualpipe_hide", Scheme::DualPipe, 2, 4, 1, true, "all,hide"},
};

INSTANTIATE_TEST_SUITE_P(Schemes, ReferenceEquality, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Executor, PassesCheckpointSomething) {
    // Guard for the test above: with all passes, some forwards really are checkpointed (an R
    // exists), so the recompute path is what gets compared.
    const mario::Plan plan = makePlan({"x", Scheme::OneFOneB, 4, 4, 1, true});
    bool hasRecompute = false;
    for (const auto& d : plan.devices)
        for (const auto& in : d.program) hasRecompute |= in.op == mario::Op::Recompute;
    EXPECT_TRUE(hasRecompute);
}

TEST(Executor, HidePlansReallyMoveAndDropRecomputations) {
    // Guard for the hide cases above: hide changed the programs the executor runs.
    for (auto [scheme, chunks] : {std::pair{Scheme::OneFOneB, 1}, std::pair{Scheme::Chimera, 1}}) {
        const mario::Plan four = makePlan({"x", scheme, 4, scheme == Scheme::OneFOneB ? 8 : 4, chunks, true});
        const mario::Plan hidden =
            makePlan({"x", scheme, 4, scheme == Scheme::OneFOneB ? 8 : 4, chunks, true, "all,hide"});
        bool differs = false;
        for (std::size_t d = 0; d < four.devices.size(); ++d)
            differs |= four.devices[d].program != hidden.devices[d].program;
        EXPECT_TRUE(differs) << mario::schemeName(scheme);
    }
}

TEST(Executor, SeveralIterationsStayEqual) {
    const mario::Plan plan = makePlan({"x", Scheme::Chimera, 4, 4, 1, true});
    mario::exec::ExecutorOptions options;
    options.reference = true;
    options.iterations = 3;
    options.lr = 0.1;
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    mario::test::expectSameStepsAsReference(*report);  // the optimizer steps gave the same weights
}

TEST(Executor, APlanWithoutReduceOrOptimizerEndsEveryStepWithOneSummedStep) {
    // The end of each device's program sums what no REDUCE_GRAD summed (Chimera's two copies ×
    // two replicas) and steps what no OPT stepped.
    mario::Plan plan = makePlan({"x", Scheme::Chimera, 4, 4, 1, true});
    for (auto& device : plan.devices)
        std::erase_if(device.program, [](const mario::Instruction& in) {
            return in.op == mario::Op::ReduceGrad || in.op == mario::Op::Optimizer;
        });
    mario::exec::ExecutorOptions options;
    options.reference = true;
    options.iterations = 3;
    options.adam = true;
    options.data_parallel = 2;
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    mario::test::expectSameStepsAsReference(*report);
}

TEST(Executor, AdamStepsGiveTheSameWeights) {
    const mario::Plan plan = makePlan({"x", Scheme::Interleaved, 2, 4, 2, true});
    mario::exec::ExecutorOptions options;
    options.reference = true;
    options.iterations = 3;
    options.adam = true;
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    mario::test::expectSameStepsAsReference(*report);
}

TEST(Executor, PlanLayersAreHonouredWhenTheyFitTheModel) {
    // Uneven explicit split of the 8 blocks over 4 stages (1F1B): still reference-equal.
    mario::Plan plan = makePlan({"x", Scheme::OneFOneB, 4, 4, 1, true});
    const std::pair<int, int> layers[] = {{0, 1}, {1, 4}, {4, 7}, {7, 8}};
    for (int s = 0; s < 4; ++s) plan.stages[s].layers = layers[s];
    mario::exec::ExecutorOptions options;
    options.reference = true;
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_TRUE(report->plan_layers_used);
    EXPECT_TRUE(report->grads_match);

    // Layers planned for a bigger model (40 blocks) fall back to the chain-position rule.
    const std::pair<int, int> big[] = {{0, 10}, {10, 20}, {20, 30}, {30, 40}};
    for (int s = 0; s < 4; ++s) plan.stages[s].layers = big[s];
    report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_FALSE(report->plan_layers_used);
    EXPECT_TRUE(report->grads_match);
}

TEST(Executor, EveryInstructionIsReportedLiveInProgramOrderOnOneCausalTimeline) {
    const mario::Plan plan = makePlan({"x", Scheme::Chimera, 4, 4, 1, true});
    const auto topology = mario::PipelineTopology::build(plan);
    ASSERT_TRUE(topology.ok());
    std::vector<std::string> lines;
    mario::exec::ExecutorOptions options;
    options.iterations = 2;
    options.on_event = [&](const std::string& line) { lines.push_back(line); };
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;

    struct Span {
        double start, end;
    };
    // (iteration, device) → the spans in arrival order; (iteration, op, stage, mb) → its span.
    std::map<std::pair<int, int>, std::vector<Span>> byDevice;
    std::map<std::tuple<int, mario::Op, int, int>, Span> byInstruction;
    std::size_t iterations = 0;
    for (const auto& line : lines) {
        const auto event = nlohmann::json::parse(line);
        if (event["event"] == "iteration") {
            ++iterations;
            continue;
        }
        if (event["event"] != "instruction") continue;
        const int iteration = event["iteration"], device = event["device"];
        auto& spans = byDevice[{iteration, device}];
        // Lines of one device arrive in program order and name the instruction at that index.
        ASSERT_EQ(event["index"].get<std::size_t>(), spans.size()) << line;
        const mario::Instruction& in = plan.devices[device].program[spans.size()];
        EXPECT_EQ(event["instruction"], mario::toActionString(in)) << line;
        const Span span{event["start_us"], event["end_us"]};
        EXPECT_LE(span.start, span.end) << line;
        // One device runs one instruction at a time.
        if (!spans.empty()) {
            EXPECT_LE(spans.back().end, span.start) << line;
        }
        spans.push_back(span);
        byInstruction[{iteration, in.op, in.stage, in.microbatch}] = span;
    }
    EXPECT_EQ(iterations, 2u);
    for (int iteration = 0; iteration < 2; ++iteration)
        for (int d = 0; d < static_cast<int>(plan.devices.size()); ++d)
            EXPECT_EQ((byDevice[{iteration, d}].size()), plan.devices[d].program.size());
    // All devices share one clock: no RECV ends before the SEND it waits for has started.
    int receives = 0;
    for (const auto& [key, span] : byInstruction) {
        const auto [iteration, op, stage, mb] = key;
        if (op != mario::Op::RecvForward && op != mario::Op::RecvBackward) continue;
        const bool forward = op == mario::Op::RecvForward;
        const int sender = forward ? topology->previousStage(stage) : topology->nextStage(stage);
        const auto send =
            byInstruction.find({iteration, forward ? mario::Op::SendForward : mario::Op::SendBackward, sender, mb});
        ASSERT_NE(send, byInstruction.end());
        EXPECT_LE(send->second.start, span.end);
        ++receives;
    }
    EXPECT_GT(receives, 0);
}

TEST(Executor, MissingSendEndsWithAnErrorNamingTheReceive) {
    mario::Plan plan = makePlan({"x", Scheme::OneFOneB, 4, 4, 1, false});
    auto& program = plan.devices[0].program;
    const mario::Instruction send{mario::Op::SendForward, 0, 0};
    auto it = std::find(program.begin(), program.end(), send);
    ASSERT_NE(it, program.end());
    program.erase(it);
    mario::exec::ExecutorOptions options;
    options.recv_timeout_s = 1;
    const auto start = std::chrono::steady_clock::now();
    auto report = mario::exec::runPlan(plan, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(report.ok());
    // Devices 1, 2 and 3 all wait from the start; whichever gives up first reports, and the
    // message names every blocked device, so the root cause (device 1 at 1RECV_F0) is in it.
    const std::string& message = report.error().message;
    EXPECT_NE(message.find("RECV_F0"), std::string::npos) << message;
    EXPECT_TRUE(message.find("device 1, instruction 1RECV_F0") != std::string::npos ||
                message.find("device 1 at 1RECV_F0") != std::string::npos)
        << message;
    EXPECT_LT(seconds, 10);
}

TEST(ExecutorCli, MalformedPlanExitsTwoWithOneLine) {
    const mario::test::ScratchDir dir("executor_cli");
    const std::string path = dir.file("malformed.mario.json");
    std::ofstream(path) << R"({"format": "mario-plan", "version": 1, "stages": 5, "devices": []})";
    int code = 0;
    const std::string out = mario::test::runExecutorCli("run " + path + " --backend cpu", code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_EQ(out.rfind("mario-executor: ", 0), 0u) << out;
}

TEST(ExecutorCli, DeadlockingPlanExitsThreeLikeTheCli) {
    // Device 0 waits for the gradient of micro-batch 0 before sending that micro-batch forward:
    // every instruction is in place, but device 1 can never start. `mario validate` exits 3 for
    // this; the executor used to exit 2, as for a malformed file.
    mario::Plan plan = makePlan({"x", Scheme::OneFOneB, 2, 2, 1, false});
    auto& program = plan.devices[0].program;
    const auto send = std::find(program.begin(), program.end(), mario::Instruction{mario::Op::SendForward, 0, 0});
    const auto recv = std::find(program.begin(), program.end(), mario::Instruction{mario::Op::RecvBackward, 0, 0});
    ASSERT_TRUE(send != program.end() && recv != program.end() && send < recv);
    std::rotate(send, send + 1, recv + 1);  // SEND_F0 now right after RECV_B0
    const mario::test::ScratchDir dir("executor_cli");
    const std::string path = dir.file("deadlock.mario.json");
    ASSERT_TRUE(mario::writePlanFile(plan, path).ok());
    int code = 0;
    const std::string out = mario::test::runExecutorCli("run " + path + " --backend cpu", code);
    EXPECT_EQ(code, mario::kDeadlock) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find("deadlock"), std::string::npos) << out;
}

TEST(ExecutorCli, AbsurdArgumentsAreRefusedWithTheirRange) {
    for (const char* args : {"--dp 100000", "--iterations 0", "--iterations 3abc"}) {
        int code = 0;
        const std::string out = mario::test::runExecutorCli(std::string("run nothing.mario.json ") + args, code);
        EXPECT_EQ(code, mario::kBadInput) << args << ": " << out;
        EXPECT_NE(out.find("expected an integer in ["), std::string::npos) << args << ": " << out;
    }
}

TEST(ExecutorCli, CudaBackendWithoutAUsableGpuEndsWithOneLine) {
    // Debian's LibTorch has no CUDA: the cuda backend (built or not) says why in one line
    // instead of failing inside LibTorch. On a CUDA machine the missing plan is the error.
    int code = 0;
    const std::string out = mario::test::runExecutorCli("run nothing.mario.json --backend cuda", code);
    EXPECT_NE(code, 0);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_TRUE(out.find("CUDA") != std::string::npos || out.find("GPU") != std::string::npos ||
                out.find("nothing.mario.json") != std::string::npos)
        << out;
}

TEST(ExecutorCli, AnUnknownBackendIsRefusedOnceWithBothNames) {
    EXPECT_EQ(*mario::exec::parseBackend("cpu"), mario::exec::Backend::Cpu);
    EXPECT_EQ(*mario::exec::parseBackend("cuda"), mario::exec::Backend::Cuda);
    EXPECT_EQ(mario::exec::backendName(mario::exec::Backend::Cuda), "cuda");
    int code = 0;
    const std::string out = mario::test::runExecutorCli("run nothing.mario.json --backend tpu", code);
    EXPECT_EQ(code, mario::kBadInput) << out;
    EXPECT_NE(out.find("unknown backend \"tpu\" (cpu or cuda)"), std::string::npos) << out;
}

TEST(ExecutorCli, DumpStepWritesTheReportedLossAndATensorFilePerEntry) {
    // --dump-step (executor/StepDump.h): what the PyTorch-runtime test reads. Its loss is the
    // summary's, every index entry names a file of shape × 8 bytes, weights and gradients
    // pair up, and every micro-batch has its input and target ids.
    const mario::Plan plan = makePlan({"x", Scheme::Interleaved, 2, 4, 2, false});
    const mario::test::ScratchDir dir("executor_dump");
    const std::string path = dir.file("plan.mario.json");
    ASSERT_TRUE(mario::writePlanFile(plan, path).ok());
    int code = 0;
    const std::string out = mario::test::runExecutorCli(
        "run " + path + " --backend cpu --model tiny,layers=4 --dump-step " + dir.file("step"), code);
    ASSERT_EQ(code, mario::kOk) << out;
    const auto summary = nlohmann::json::parse(out.substr(out.rfind('{')));
    std::ifstream in(dir.file("step/step.json"));
    const auto step = nlohmann::json::parse(in);
    EXPECT_DOUBLE_EQ(step.at("loss").get<double>(), summary.at("loss").get<double>());
    EXPECT_EQ(step.at("model").at("layers"), 4);
    EXPECT_EQ(step.at("stages").size(), plan.stages.size());
    std::map<std::string, int> kinds;
    for (const auto& entry : step.at("tensors")) {
        ++kinds[entry.at("kind")];
        std::int64_t count = 1;
        for (const auto& extent : entry.at("shape")) count *= extent.get<std::int64_t>();
        const auto file = std::filesystem::path(dir.file("step")) / entry.at("file").get<std::string>();
        EXPECT_EQ(std::filesystem::file_size(file), static_cast<std::uintmax_t>(count * 8)) << entry.dump();
    }
    EXPECT_EQ(kinds["weight"], 4 * 12 + 6);  // blocks, embeddings (2), final norm (2), head (2)
    EXPECT_EQ(kinds["grad"], kinds["weight"]);
    EXPECT_EQ(kinds["input"], plan.microbatchCount());
    EXPECT_EQ(kinds["target"], plan.microbatchCount());
}

TEST(ExecutorCli, DumpStepIsRefusedForMoreThanOneStepOrLessThanDouble) {
    const mario::Plan plan = makePlan({"x", Scheme::OneFOneB, 2, 2, 1, false});
    const mario::test::ScratchDir dir("executor_dump");
    const std::string path = dir.file("plan.mario.json");
    ASSERT_TRUE(mario::writePlanFile(plan, path).ok());
    for (const auto& [args, why] : {std::pair{"--iterations 2", "it needs --iterations 1 (got 2)"},
                                    std::pair{"--dtype float32", "it needs --dtype float64 (got \"float32\")"}}) {
        int code = 0;
        const std::string out = mario::test::runExecutorCli(
            "run " + path + " --backend cpu --dump-step " + dir.file("step") + " " + args, code);
        EXPECT_EQ(code, mario::kBadInput) << args << ": " << out;
        EXPECT_EQ(out.find("mario-executor: --dump-step"), 0u) << out;
        EXPECT_NE(out.find(why), std::string::npos) << out;
        EXPECT_FALSE(std::filesystem::exists(dir.file("step"))) << "refused, yet the folder was made";
    }
}

TEST(ExecutorCli, EveryLineOfARunWithEventsIsALiveEventInProtocolOrder) {
    // hello first, then instructions and one iteration per step, the summary last: what the
    // workbench's LiveRun reads, through the same parser.
    const mario::Plan plan = makePlan({"x", Scheme::OneFOneB, 2, 2, 1, false});
    const mario::test::ScratchDir dir("executor_cli");
    const std::string path = dir.file("events.mario.json");
    ASSERT_TRUE(mario::writePlanFile(plan, path).ok());
    int code = 0;
    const std::string out = mario::test::runExecutorCli("run " + path + " --backend cpu --events --iterations 2", code);
    ASSERT_EQ(code, mario::kOk) << out;
    std::vector<mario::LiveEvent> events;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        auto event = mario::parseLiveEvent(line);
        ASSERT_TRUE(event.ok()) << line << ": " << event.error().message;
        events.push_back(*event);
    }
    ASSERT_GE(events.size(), 2u);
    ASSERT_TRUE(std::holds_alternative<mario::LiveHello>(events.front())) << out;
    const auto& hello = std::get<mario::LiveHello>(events.front());
    EXPECT_TRUE(mario::checkLiveProtocol(hello).ok());
    EXPECT_EQ(hello.backend, "cpu");
    EXPECT_EQ(hello.devices, 2);
    EXPECT_EQ(hello.instructions, plan.instructionCount());
    ASSERT_TRUE(std::holds_alternative<mario::LiveSummary>(events.back())) << out;
    const auto& summary = std::get<mario::LiveSummary>(events.back());
    EXPECT_EQ(summary.step_ms.size(), 2u);
    EXPECT_EQ(summary.devices, 2);
    std::size_t instructions = 0;
    std::vector<int> iterations;
    for (std::size_t i = 1; i + 1 < events.size(); ++i) {
        if (const auto* step = std::get_if<mario::LiveIteration>(&events[i])) {
            iterations.push_back(step->iteration);
            EXPECT_EQ(step->peak_activation_bytes.size(), 2u);
            if (iterations.size() == 2) {
                EXPECT_DOUBLE_EQ(step->loss, summary.loss);
            }
        } else {
            ASSERT_TRUE(std::holds_alternative<mario::LiveInstruction>(events[i])) << i;
            ++instructions;
        }
    }
    EXPECT_EQ(iterations, (std::vector<int>{0, 1}));
    EXPECT_EQ(instructions, 2 * plan.instructionCount());
}

}  // namespace
