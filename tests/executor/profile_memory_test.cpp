// A profile's memory against the executor's own measurement (issue 33): plans costed with a
// profile that `mario-executor profile` measured must peak, per device, where the executor's
// run of the same model peaks. Before the profile measured what a split backward's I keeps
// until W (weight_grad_bytes) and the transients an instruction allocates above what it keeps
// (working_bytes), ZB-H1 peaked 13% below the run on the CPU and 16-28% below on an H200, and
// every other schedule 1.5-5% below on the CPU (4-15% on the H200, where eager attention's
// score gradients are the transient). Chimera with the passes peaked 19% above the simulation
// until the in-process REDUCE_GRAD summed in place (executor/Exchange.h). The model is
// executor_fidelity.sh's, where every schedule below agrees within 1.4% (GPipe with the passes
// is 3% high on one device and left out).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/Simulator.h"
#include "executor/Executor.h"
#include "executor/ModelSpec.h"
#include "tests/common/ScratchDir.h"
#include "tests/executor/RunCli.h"

namespace {

constexpr const char* kModel = "layers=8,hidden=128,heads=4,seq=64,vocab=256";

class ProfileMemory : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new mario::test::ScratchDir("profile-memory");
        profile_ = dir_->file("cpu.profile.json");
        int code = 0;
        const std::string out = mario::test::runExecutorCli(
            std::string("profile --model ") + kModel + " --max-blocks 4 --repeats 1 -o " + profile_, code);
        ASSERT_EQ(code, 0) << out;
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }

    // Simulated and measured peak of every device for one schedule on 2 devices, 8 micro-batches.
    void expectPeaksMatch(const std::string& scheme, const std::string& passes) {
        const nlohmann::json document = {
            {"format", "mario-config"},
            {"version", 1},
            {"name", "profile memory " + scheme},
            {"model",
             {{"name", "cpu"},
              {"layers", 8},
              {"hidden", 128},
              {"heads", 4},
              {"kv_heads", 4},
              {"ffn_hidden", 512},
              {"vocab", 256},
              {"sequence_length", 64},
              {"gated_mlp", false},
              {"tied_embeddings", false}}},
            {"hardware",
             {{"name", "cpu"},
              {"peak_tflops", 1},
              {"memory_gb", 80},
              {"hbm_gb_per_s", 100},
              {"intra_node_gb_per_s", 1000},
              {"inter_node_gb_per_s", 1000},
              {"link_latency_ms", 0}}},
            {"devices", 2},
            {"profile", profile_},
            {"parallel", {{"scheme", scheme}, {"pp", 2}, {"dp", 1}, {"tp", 1}, {"micro_batch_size", 1}}},
            {"microbatches", 8},
            {"passes", nlohmann::json::parse(passes)}};
        auto config = mario::readConfig(document, mario::PresetLibrary(dir_->path().string()));
        ASSERT_TRUE(config) << config.error().message;
        auto plan = mario::buildPlan(*config);
        ASSERT_TRUE(plan) << plan.error().message;
        auto sim = mario::Simulator::run(*plan);
        ASSERT_TRUE(sim) << sim.error().message;

        mario::exec::ExecutorOptions options;
        auto model = mario::exec::parseModelSpec(kModel);
        ASSERT_TRUE(model) << model.error().message;
        options.model = *model;
        // The second step's peak: in the first, no gradient exists until the first backward.
        options.iterations = 2;
        auto run = mario::exec::runPlan(*plan, options);
        ASSERT_TRUE(run) << run.error().message;
        ASSERT_EQ(run->peak_allocated_bytes.size(), sim->devices.size());
        for (std::size_t d = 0; d < sim->devices.size(); ++d) {
            const double simulated = sim->devices[d].peak_bytes, measured = run->peak_allocated_bytes[d];
            EXPECT_NEAR(simulated, measured, 0.02 * measured)
                << scheme << " " << passes << ", device " << d << ": simulated " << simulated << ", measured "
                << measured;
        }
    }

    static mario::test::ScratchDir* dir_;
    static std::string profile_;
};

mario::test::ScratchDir* ProfileMemory::dir_ = nullptr;
std::string ProfileMemory::profile_;

TEST_F(ProfileMemory, OneFOneB) { expectPeaksMatch("1f1b", "[]"); }
TEST_F(ProfileMemory, ZeroBubbleH1HoldsWhatIKeepsUntilW) { expectPeaksMatch("zb-h1", "[]"); }
TEST_F(ProfileMemory, GPipe) { expectPeaksMatch("gpipe", "[]"); }
TEST_F(ProfileMemory, Chimera) { expectPeaksMatch("chimera", "[]"); }
TEST_F(ProfileMemory, OneFOneBWithThePasses) {
    expectPeaksMatch("1f1b", R"(["checkpoint", "overlap", "redundancy", "prepose"])");
}
TEST_F(ProfileMemory, ZeroBubbleH1WithThePasses) {
    expectPeaksMatch("zb-h1", R"(["checkpoint", "overlap", "redundancy", "prepose"])");
}
TEST_F(ProfileMemory, ChimeraWithThePassesSumsItsReplicasInPlace) {
    expectPeaksMatch("chimera", R"(["checkpoint", "overlap", "redundancy", "prepose"])");
}

}  // namespace
