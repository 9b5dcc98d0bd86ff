// The multi-process path through the real binary, launched the way torchrun launches it: one
// process per (device, replica) in Megatron's rank order, PyTorch's TCPStore and Gloo process
// groups between them (torchrun itself where the build has one). Rank 0's summary
// must equal the single-device reference; a killed rank must end every other rank promptly.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/io/PlanJson.h"
#include "core/util/ExitCode.h"
#include "executor/Executor.h"
#include "tests/common/ScratchDir.h"
#include "tests/common/UnitPlans.h"
#include "tests/executor/MultiProcess.h"

namespace {

using mario::Scheme;
namespace fs = std::filesystem;

struct WorldCase {
    const char* name;
    Scheme scheme;
    int devices, microbatches, chunks, world;
    bool passes;
};

fs::path writePlan(const WorldCase& c, const mario::test::ScratchDir& dir) {
    auto plan = c.passes ? mario::test::makeUnitPlanWithPasses(c.scheme, c.devices, c.microbatches, c.chunks)
                         : mario::test::makeUnitPlan(c.scheme, c.devices, c.microbatches, c.chunks);
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().message);
    const fs::path file = dir.file("plan.mario.json");
    EXPECT_TRUE(mario::writePlanFile(*plan, file.string()).ok());
    return file;
}

// The last line of rank 0's output, parsed.
nlohmann::json summaryOf(const std::string& output) {
    auto end = output.find_last_not_of('\n');
    auto start = output.rfind('\n', end);
    return nlohmann::json::parse(output.substr(start == std::string::npos ? 0 : start + 1, end + 1));
}

// Four ranks of a 1F1B run long enough to outlast any test (a failure has to end it), in a
// scratch folder of their own.
struct BusyWorld {
    explicit BusyWorld(const std::string& name) : dir("dist_" + name) {
        const fs::path plan = writePlan({name.c_str(), Scheme::OneFOneB, 4, 8, 1, 4, false}, dir);
        ranks = std::make_unique<mario::test::Ranks>(
            4,
            std::vector<std::string>{"run", plan.string(), "--backend", "cpu", "--iterations", "100000", "--events",
                                     "--recv-timeout-s", "60", "--model", "layers=8,hidden=64,heads=4,seq=32,vocab=64"},
            plan.parent_path());
    }

    // Waits (up to a minute) until `rank` computes: its live events have started.
    bool computing(int rank) const {
        const auto started = std::chrono::steady_clock::now();
        while (ranks->output(rank).find("\"instruction\"") == std::string::npos &&
               std::chrono::steady_clock::now() - started < std::chrono::seconds(60))
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return ranks->output(rank).find("\"instruction\"") != std::string::npos;
    }

    mario::test::ScratchDir dir;
    std::unique_ptr<mario::test::Ranks> ranks;
};

class MultiProcess : public ::testing::TestWithParam<WorldCase> {};

TEST_P(MultiProcess, RankZeroReportsGradientsEqualToTheSingleDeviceRun) {
    const WorldCase& c = GetParam();
    const mario::test::ScratchDir dir(std::string("dist_") + c.name);
    const fs::path plan = writePlan(c, dir);
    mario::test::Ranks ranks(c.world,
                             {"run", plan.string(), "--backend", "cpu", "--reference", "--iterations", "2",
                              "--optimizer", "adam", "--recv-timeout-s", "20", "--seed", "5"},
                             plan.parent_path());
    ASSERT_TRUE(ranks.wait(120)) << "ranks did not finish";
    for (int r = 0; r < c.world; ++r) ASSERT_EQ(ranks[r].exitCode, 0) << "rank " << r << ": " << ranks.output(r);
    for (int r = 1; r < c.world; ++r) EXPECT_EQ(ranks.output(r), "") << "only rank 0 prints";
    const auto summary = summaryOf(ranks.output(0));
    EXPECT_EQ(summary["world"], c.world);
    EXPECT_EQ(summary["data_parallel"], c.world / c.devices);
    EXPECT_EQ(summary["devices"], c.devices);
    EXPECT_TRUE(summary["grads_match"].get<bool>()) << summary.dump();
    EXPECT_NEAR(summary["loss"].get<double>(), summary["reference_loss"].get<double>(), 1e-9);
    EXPECT_LT(summary["max_grad_rel_diff"].get<double>(), 1e-9);

    // The same plan with the same replicas as threads of one process gives the same loss.
    mario::exec::ExecutorOptions options;
    options.data_parallel = c.world / c.devices;
    options.iterations = 2;
    options.adam = true;
    options.seed = 5;
    auto inProcess = mario::exec::runPlan(*mario::readPlanFile(plan.string()), options);
    ASSERT_TRUE(inProcess.ok()) << inProcess.error().message;
    EXPECT_NEAR(inProcess->loss, summary["loss"].get<double>(), 1e-12);
}

const WorldCase kWorlds[] = {
    {"onefoneb_passes_w4", Scheme::OneFOneB, 4, 4, 1, 4, true},
    {"chimera_passes_w8_dp2", Scheme::Chimera, 4, 4, 1, 8, true},
    {"interleaved_w4_dp2", Scheme::Interleaved, 2, 4, 2, 4, false},
};

INSTANTIATE_TEST_SUITE_P(Worlds, MultiProcess, ::testing::ValuesIn(kWorlds),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MultiProcessFailure, AKilledRankEndsEveryOtherRankWithinSeconds) {
    const BusyWorld world("killed");
    mario::test::Ranks& ranks = *world.ranks;
    // Kill rank 2 once it is computing.
    ASSERT_TRUE(world.computing(2)) << ranks.output(2);
    ranks.kill(2);
    const auto killed = std::chrono::steady_clock::now();
    ASSERT_TRUE(ranks.wait(20)) << "a surviving rank hung";
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    EXPECT_LT(seconds, 10) << "the recv timeout is 60 s: survivors must notice the closed connection";
    for (int r : {0, 1, 3}) {
        EXPECT_EQ(ranks[r].exitCode, mario::kRunFailed) << "rank " << r << ": " << ranks.output(r);
        EXPECT_NE(ranks.output(r).find("mario-executor: "), std::string::npos) << ranks.output(r);
    }
    // Every survivor names rank 2, the one that died: its neighbours saw its connection close,
    // rank 0 reads their line from the store (it used to blame rank 1 instead).
    for (int r : {0, 1, 3}) {
        const std::string out = ranks.output(r);
        const auto line = out.substr(out.rfind("mario-executor: "));
        EXPECT_NE(line.find("rank 2"), std::string::npos) << "rank " << r << ": " << line;
        for (const char* blame : {"rank 1 closed", "connection to rank 1 ", "rank 3 closed", "connection to rank 3 "})
            EXPECT_EQ(line.find(blame), std::string::npos) << "rank " << r << ": " << line;
    }
}

TEST(MultiProcessFailure, AFrozenRankIsNamedByItsHeartbeatLongBeforeTheReceiveTimeout) {
    // A stopped process keeps its connections open, so nothing closes: only its heartbeat in the
    // store (executor/Heartbeat.h, 5 s here) tells the others, as it would under NCCL.
    const BusyWorld world("frozen");
    mario::test::Ranks& ranks = *world.ranks;
    ASSERT_TRUE(world.computing(2)) << ranks.output(2);
    ranks.freeze(2);
    const auto frozen = std::chrono::steady_clock::now();
    for (int r : {0, 1, 3}) {
        while (ranks.output(r).find("mario-executor: ") == std::string::npos &&
               std::chrono::steady_clock::now() - frozen < std::chrono::seconds(40))
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - frozen).count();
    EXPECT_LT(seconds, 20) << "the recv timeout is 60 s: the heartbeat must find the frozen rank first";
    ranks.kill(2);
    ASSERT_TRUE(ranks.wait(20)) << "a surviving rank hung";
    for (int r : {0, 1, 3}) {
        EXPECT_EQ(ranks[r].exitCode, mario::kRunFailed) << "rank " << r << ": " << ranks.output(r);
        const std::string out = ranks.output(r);
        const auto at = out.rfind("mario-executor: ");
        ASSERT_NE(at, std::string::npos) << out;
        EXPECT_NE(out.find("rank 2 stopped: no heartbeat", at), std::string::npos) << "rank " << r << ": " << out;
    }
}

TEST(MultiProcessFailure, AWorldThatDoesNotSplitIntoThePlanIsRefusedAtOnce) {
    const WorldCase c{"world3", Scheme::OneFOneB, 2, 2, 1, 3, false};
    const mario::test::ScratchDir dir(std::string("dist_") + c.name);
    const fs::path plan = writePlan(c, dir);
    mario::test::Ranks ranks(3, {"run", plan.string(), "--backend", "cpu"}, plan.parent_path());
    ASSERT_TRUE(ranks.wait(30));
    for (int r = 0; r < 3; ++r) {
        // Bad input found before the run starts (docs/exit-codes.md), not a failed run.
        EXPECT_EQ(ranks[r].exitCode, mario::kBadInput);
        EXPECT_NE(ranks.output(r).find("WORLD_SIZE=3 is not a multiple of the plan's 2 pipeline devices"),
                  std::string::npos)
            << ranks.output(r);
    }
}

TEST(MultiProcessFailure, RanksStartedWithDifferentRunsAreRefusedBeforeTheyExchangeAnything) {
    // Rank 1 was given another seed: its weights would differ from rank 0's without any error.
    const WorldCase c{"mismatch", Scheme::OneFOneB, 2, 2, 1, 2, false};
    const mario::test::ScratchDir dir(std::string("dist_") + c.name);
    const fs::path plan = writePlan(c, dir);
    mario::test::Ranks ranks(
        2,
        [&](int rank) {
            return std::vector<std::string>{"run", plan.string(), "--backend", "cpu", "--seed", rank == 1 ? "6" : "5"};
        },
        plan.parent_path());
    ASSERT_TRUE(ranks.wait(60));
    for (int r = 0; r < 2; ++r) {
        const std::string out = ranks.output(r);
        EXPECT_EQ(ranks[r].exitCode, mario::kRunFailed) << out;
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
        EXPECT_NE(out.find("ranks 0 and 1 were started with different plans or run options"), std::string::npos) << out;
    }
}

#ifdef MARIO_TORCHRUN
// torchrun exactly as a user types it, with its own rendezvous: the ranks join the agent's
// TCPStore at the MASTER_ADDR:MASTER_PORT it hands them (TORCHELASTIC_USE_AGENT_STORE=True).
TEST(Torchrun, FourProcessesOnTorchrunsOwnRendezvousMatchTheSingleDeviceRun) {
    const WorldCase c{"torchrun_w4", Scheme::OneFOneB, 4, 4, 1, 4, false};
    const mario::test::ScratchDir dir(std::string("dist_") + c.name);
    const fs::path plan = writePlan(c, dir);
    const fs::path out = dir.file("torchrun.txt");
    const std::string command = std::string(MARIO_TORCHRUN) + " --standalone --nproc-per-node 4 --no-python " +
                                MARIO_EXECUTOR_BINARY + " run " + plan.string() +
                                " --backend cpu --reference --iterations 2 --seed 5 > " + out.string() + " 2>&1";
    const int status = std::system(command.c_str());
    std::ifstream in(out);
    std::string line, summary;
    while (std::getline(in, line))
        if (line.rfind("{\"data_parallel\"", 0) == 0) summary = line;
    ASSERT_EQ(status, 0) << command;
    ASSERT_FALSE(summary.empty()) << "no summary line from rank 0";
    const auto json = nlohmann::json::parse(summary);
    EXPECT_EQ(json["world"], 4);
    EXPECT_TRUE(json["grads_match"].get<bool>()) << summary;
    EXPECT_LT(json["max_grad_rel_diff"].get<double>(), 1e-9);
}
#endif

TEST(MultiProcessFailure, CudaRanksWithoutAUsableGpuSayWhyInOneLine) {
    // Debian's LibTorch has no CUDA: every rank of a cuda launch ends at once with the reason
    // (on a CUDA machine this would be a real NCCL run, which this CPU suite does not cover).
    const WorldCase c{"cuda_world2", Scheme::OneFOneB, 2, 2, 1, 2, false};
    const mario::test::ScratchDir dir(std::string("dist_") + c.name);
    const fs::path plan = writePlan(c, dir);
    mario::test::Ranks ranks(2, {"run", plan.string(), "--backend", "cuda"}, plan.parent_path());
    ASSERT_TRUE(ranks.wait(60));
    for (int r = 0; r < 2; ++r) {
        const std::string out = ranks.output(r);
        if (ranks[r].exitCode == 0) GTEST_SKIP() << "this LibTorch has CUDA and a GPU: " << out;
        EXPECT_EQ(ranks[r].exitCode, mario::kRunFailed) << out;
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
        EXPECT_TRUE(out.find("CUDA") != std::string::npos || out.find("GPU") != std::string::npos) << out;
    }
}

TEST(InProcessReplicas, DataParallelThreadsMatchTheReferenceOverAllReplicasData) {
    auto plan = mario::test::makeUnitPlan(Scheme::Chimera, 4, 4);
    ASSERT_TRUE(plan.ok());
    mario::exec::ExecutorOptions options;
    options.reference = true;
    options.data_parallel = 3;
    auto three = mario::exec::runPlan(*plan, options);
    ASSERT_TRUE(three.ok()) << three.error().message;
    EXPECT_TRUE(three->grads_match);
    EXPECT_NEAR(three->loss, *three->reference_loss, 1e-9);
    EXPECT_EQ(three->peak_activation_bytes.size(), 4u);
    // Three replicas see three times the data: a different loss from one replica's.
    options.data_parallel = 1;
    auto one = mario::exec::runPlan(*plan, options);
    ASSERT_TRUE(one.ok());
    EXPECT_GT(std::abs(one->loss - three->loss), 1e-6);
}

}  // namespace
