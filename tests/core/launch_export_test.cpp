// Cluster exports of a tuned candidate: the Megatron-LM flags for known models, the launch
// layout of the torchrun and Slurm scripts, that bash parses both, and the bundle on disk.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "core/tune/LaunchExport.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

namespace fs = std::filesystem;

// GPT-3 13B as the preset library describes it, written out so that a preset change does not
// silently change what this test checks.
Config gpt3_13b() {
    Config config;
    config.name = "gpt3-13b";
    config.model = {.name = "gpt3-13b",
                    .layers = 40,
                    .hidden = 5120,
                    .heads = 40,
                    .vocab = 50257,
                    .sequence_length = 2048,
                    .tied_embeddings = true};
    config.parallel.global_batch_size = 128;
    return config;
}

// A LLaMA-3-8B-like model: grouped-query attention (8 KV heads), SwiGLU, untied embeddings.
Config llama3_8b() {
    Config config;
    config.name = "llama3-8b";
    config.model = {.name = "llama3-8b",
                    .layers = 32,
                    .hidden = 4096,
                    .heads = 32,
                    .kv_heads = 8,
                    .ffn_hidden = 14336,
                    .vocab = 128256,
                    .sequence_length = 8192,
                    .gated_mlp = true};
    config.parallel.global_batch_size = 64;
    return config;
}

TuneCandidate candidate(Scheme scheme, int pp, int dp, int mbs, bool checkpoint, int chunks = 1, int tp = 1) {
    TuneCandidate c;
    c.scheme = scheme;
    c.pp = pp;
    c.dp = dp;
    c.tp = tp;
    c.chunks = chunks;
    c.micro_batch_size = mbs;
    c.checkpoint = checkpoint;
    return c;
}

std::set<std::string> lines(const std::string& text, bool withComments = true) {
    std::set<std::string> result;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (withComments || line.rfind('#', 0) != 0) result.insert(line);
    return result;
}

bool hasFlag(const std::string& text, const std::string& flag) { return lines(text).count(flag) > 0; }

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// A fresh directory per test under the system's temporary directory.
fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("mario_launch_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    return dir;
}

bool bashAccepts(const fs::path& script) {
    const std::string command = "/bin/bash -n '" + script.string() + "'";
    return std::system(command.c_str()) == 0;
}

TEST(LaunchMegatron, Gpt3InterleavedWithCheckpointing) {
    const std::string args = megatronArguments(gpt3_13b(), candidate(Scheme::Interleaved, 4, 16, 1, true, 2));
    for (const char* expected :
         {"--num-layers 40", "--hidden-size 5120", "--num-attention-heads 40", "--ffn-hidden-size 20480",
          "--seq-length 2048", "--max-position-embeddings 2048", "--vocab-size 50257", "--tensor-model-parallel-size 1",
          "--pipeline-model-parallel-size 4", "--num-layers-per-virtual-pipeline-stage 5", "--micro-batch-size 1",
          "--global-batch-size 128", "--bf16", "--recompute-granularity full", "--recompute-method uniform",
          "--recompute-num-layers 5"})
        EXPECT_TRUE(hasFlag(args, expected)) << expected << "\n" << args;
    // GPT-3 is Megatron's default architecture: no LLaMA flags, tied embeddings, no GQA, no TP.
    for (const char* absent : {"--swiglu", "--disable-bias-linear", "--untie-embeddings-and-output-weights",
                               "--group-query-attention", "--sequence-parallel", "--use-distributed-optimizer"})
        EXPECT_FALSE(mentions(args, absent)) << absent;
    // The checkpointing comment says Megatron cannot reproduce Mario's placement.
    EXPECT_TRUE(mentions(args, "# Mario checkpoints whole stages"));
    EXPECT_TRUE(mentions(args, "mario-executor with the plan file"));
}

TEST(LaunchMegatron, RecomputeOnlyWhenTheCandidateCheckpoints) {
    const std::string without = megatronArguments(gpt3_13b(), candidate(Scheme::OneFOneB, 8, 8, 2, false));
    EXPECT_FALSE(mentions(without, "--recompute"));
    EXPECT_FALSE(mentions(without, "--num-layers-per-virtual-pipeline-stage"));
    const std::string with = megatronArguments(gpt3_13b(), candidate(Scheme::OneFOneB, 8, 8, 2, true));
    EXPECT_TRUE(hasFlag(with, "--recompute-granularity full"));
    EXPECT_TRUE(hasFlag(with, "--recompute-num-layers 5"));  // 40 layers / 8 stages
}

TEST(LaunchMegatron, LlamaGetsGqaSwigluAndTensorParallelFlags) {
    Config config = llama3_8b();
    config.parallel.distributed_optimizer = true;
    const std::string args = megatronArguments(config, candidate(Scheme::OneFOneB, 4, 4, 1, false, 1, 2));
    for (const char* expected :
         {"--group-query-attention", "--num-query-groups 8", "--ffn-hidden-size 14336", "--swiglu",
          "--normalization RMSNorm", "--disable-bias-linear", "--position-embedding-type rope",
          "--untie-embeddings-and-output-weights", "--tensor-model-parallel-size 2", "--sequence-parallel",
          "--use-distributed-optimizer", "--vocab-size 128256", "--seq-length 8192"})
        EXPECT_TRUE(hasFlag(args, expected)) << expected << "\n" << args;
}

TEST(LaunchMegatron, EveryValueIsOneWordAfterItsFlag) {
    // $(grep -v '^#' megatron_args.txt) splits on whitespace: each line must be a flag and at
    // most one value.
    const std::string args = megatronArguments(llama3_8b(), candidate(Scheme::Interleaved, 4, 2, 2, true, 4));
    for (const auto& line : lines(args, false)) {
        ASSERT_EQ(line.rfind("--", 0), 0u) << line;
        EXPECT_LE(std::count(line.begin(), line.end(), ' '), 1) << line;
    }
}

TEST(LaunchMegatron, ChimeraFallsBackToOneFOneBWithAComment) {
    const std::string chimera = megatronArguments(gpt3_13b(), candidate(Scheme::Chimera, 8, 2, 1, true));
    const std::string oneFOneB = megatronArguments(gpt3_13b(), candidate(Scheme::OneFOneB, 8, 2, 1, true));
    EXPECT_EQ(lines(chimera, false), lines(oneFOneB, false));
    EXPECT_TRUE(mentions(chimera, "# Chimera"));
    EXPECT_TRUE(mentions(chimera, "1F1B with the same pp = 8"));
}

TEST(LaunchMegatron, UnevenSplitIsFlaggedNotFaked) {
    const std::string args = megatronArguments(gpt3_13b(), candidate(Scheme::Interleaved, 8, 2, 1, false, 4));
    EXPECT_FALSE(mentions(args, "--num-layers-per-virtual-pipeline-stage"));  // 40 / 32 stages
    EXPECT_TRUE(mentions(args, "# warning: 40 layers do not split evenly over 32 stages"));
}

TEST(LaunchLayout, DerivesNodesAndRejectsUnevenWorlds) {
    auto layout = launchLayout(candidate(Scheme::OneFOneB, 8, 8, 1, false), {});
    ASSERT_TRUE(layout.ok());
    EXPECT_EQ(layout->world, 64);
    EXPECT_EQ(layout->nodes, 8);
    EXPECT_EQ(layout->per_node, 8);

    auto small = launchLayout(candidate(Scheme::OneFOneB, 4, 1, 1, false), {});
    ASSERT_TRUE(small.ok());
    EXPECT_EQ(small->nodes, 1);
    EXPECT_EQ(small->per_node, 4);

    auto odd = launchLayout(candidate(Scheme::OneFOneB, 3, 3, 1, false), {});  // 9 on 8-GPU nodes
    ASSERT_FALSE(odd.ok());
    EXPECT_TRUE(mentions(odd.error().message, "world size 9")) << odd.error().message;

    LaunchOptions tooFew;
    tooFew.nodes = 4;
    auto crowded = launchLayout(candidate(Scheme::OneFOneB, 8, 8, 1, false), tooFew);
    ASSERT_FALSE(crowded.ok());
    EXPECT_TRUE(mentions(crowded.error().message, "16 GPUs")) << crowded.error().message;
}

TEST(LaunchScripts, TorchrunAndSlurmFor64GpusParseWithBash) {
    if (!fs::exists("/bin/bash")) GTEST_SKIP() << "no /bin/bash";
    const Config config = gpt3_13b();
    const TuneCandidate winner = candidate(Scheme::Interleaved, 8, 8, 1, true, 2);
    LaunchOptions options;
    options.model_spec = "layers=8,hidden=64,heads=4,seq=32,vocab=256";
    options.partition = "gpu";
    const std::string torchrun = torchrunScript(config, winner, "plan.mario.json", options);
    EXPECT_TRUE(mentions(torchrun, "torchrun --nnodes 8 --nproc-per-node 8")) << torchrun;
    EXPECT_TRUE(mentions(torchrun, "--rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\""));
    EXPECT_TRUE(mentions(torchrun, "--no-python \"$EXECUTOR\" run \"$PLAN\" --backend cuda --iterations 10"));
    EXPECT_TRUE(mentions(torchrun, "--model layers=8,hidden=64,heads=4,seq=32,vocab=256"));
    EXPECT_TRUE(mentions(torchrun, "set -euo pipefail"));
    EXPECT_TRUE(mentions(torchrun, "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\""));
    EXPECT_TRUE(mentions(torchrun, winner.label()));
    EXPECT_TRUE(mentions(torchrun, "# World size 64"));

    const std::string slurm = slurmScript(config, winner, "plan.mario.json", options);
    for (const char* expected :
         {"#SBATCH --job-name=mario", "#SBATCH --nodes=8", "#SBATCH --ntasks-per-node=8", "#SBATCH --gpus-per-node=8",
          "#SBATCH --time=01:00:00", "#SBATCH --partition=gpu", "#SBATCH --exclusive"})
        EXPECT_TRUE(hasFlag(slurm, expected)) << expected;
    EXPECT_TRUE(mentions(slurm, "scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1"));
    EXPECT_TRUE(mentions(slurm, "RANK=\"$SLURM_PROCID\" WORLD_SIZE=\"$SLURM_NTASKS\" LOCAL_RANK=\"$SLURM_LOCALID\""));

    const fs::path dir = scratch("parse");
    fs::create_directories(dir);
    std::ofstream(dir / "t.sh") << torchrun;
    std::ofstream(dir / "s.sh") << slurm;
    EXPECT_TRUE(bashAccepts(dir / "t.sh"));
    EXPECT_TRUE(bashAccepts(dir / "s.sh"));
    fs::remove_all(dir);
}

TEST(LaunchScripts, SayWhatTheSimulationAssumedOfTheLinks) {
    // Megatron-LM's order on 8-GPU nodes, worked by hand: pp 8 x dp 2 puts device d on ranks 2d
    // and 2d + 1, so devices 3 → 4 (ranks 6 → 8) cross nodes while each device's replicas share
    // one; pp 4 x dp 2 is one node; pp 2 x dp 8 puts each device's 8 replicas on a node of its
    // own, and every hop crosses.
    const LaunchOptions options;  // 8 GPUs a node
    auto links = [&](int pp, int dp) {
        const std::string script =
            torchrunScript(gpt3_13b(), candidate(Scheme::OneFOneB, pp, dp, 1, false), "p.json", options);
        const auto at = script.find("# Simulated links: ");
        return at == std::string::npos ? std::string() : script.substr(at, script.find('\n', at) - at);
    };
    EXPECT_EQ(links(8, 2), "# Simulated links: pipeline hops cross nodes (InfiniBand paces them), gradient "
                           "all-reduce inside a node (NVLink).");
    EXPECT_EQ(links(4, 2), "# Simulated links: pipeline hops all inside a node (NVLink), gradient all-reduce "
                           "inside a node (NVLink).");
    EXPECT_EQ(links(2, 8), "# Simulated links: pipeline hops cross nodes (InfiniBand paces them), gradient "
                           "all-reduce inside a node (NVLink).");
    EXPECT_EQ(links(8, 1), "# Simulated links: pipeline hops all inside a node (NVLink).");
}

TEST(LaunchScripts, AwkwardStringsAreQuoted) {
    LaunchOptions options;
    options.executor = "/opt/my tools/mario-executor";
    options.model_spec = "it's tiny";
    const std::string torchrun =
        torchrunScript(gpt3_13b(), candidate(Scheme::OneFOneB, 2, 1, 1, false), "my plan.json", options);
    EXPECT_TRUE(mentions(torchrun, "EXECUTOR='/opt/my tools/mario-executor'"));
    EXPECT_TRUE(mentions(torchrun, "--model 'it'\\''s tiny'"));
    EXPECT_TRUE(mentions(torchrun, "PLAN='my plan.json'"));
}

TEST(LaunchScripts, ImpossibleLayoutGivesAScriptThatRefuses) {
    const std::string script = torchrunScript(gpt3_13b(), candidate(Scheme::OneFOneB, 3, 3, 1, false), "p.json", {});
    EXPECT_FALSE(mentions(script, "torchrun --nnodes"));
    EXPECT_TRUE(mentions(script, "exit 1"));
}

TEST(LaunchBundle, WritesFourFilesWithExecutableScripts) {
    const fs::path dir = scratch("bundle") / "nested";
    const Plan plan = test::unitPlan(Scheme::OneFOneB, 4, 8);
    auto written = writeLaunchBundle(dir.string(), gpt3_13b(), candidate(Scheme::OneFOneB, 4, 2, 1, true), plan, {});
    ASSERT_TRUE(written.ok()) << written.error().message;
    for (const char* name : {"plan.mario.json", "megatron_args.txt", "launch_torchrun.sh", "launch_slurm.sh"})
        EXPECT_TRUE(fs::is_regular_file(dir / name)) << name;
    for (const char* name : {"launch_torchrun.sh", "launch_slurm.sh"}) {
        const auto perms = fs::status(dir / name).permissions();
        EXPECT_NE(perms & fs::perms::owner_exec, fs::perms::none) << name;
        EXPECT_NE(perms & fs::perms::others_exec, fs::perms::none) << name;
        if (fs::exists("/bin/bash")) {
            EXPECT_TRUE(bashAccepts(dir / name)) << name;
        }
    }
    EXPECT_EQ(fs::status(dir / "megatron_args.txt").permissions() & fs::perms::owner_exec, fs::perms::none);
    EXPECT_TRUE(mentions(readFile(dir / "megatron_args.txt"), "--pipeline-model-parallel-size 4"));
    EXPECT_TRUE(mentions(readFile(dir / "plan.mario.json"), "mario-plan"));
    EXPECT_TRUE(mentions(readFile(dir / "launch_torchrun.sh"), "--nnodes 1 --nproc-per-node 8"));
    fs::remove_all(dir.parent_path());
}

// mario-executor has no tensor parallelism: run with WORLD_SIZE = pp·dp·tp it would train tp
// data-parallel replicas instead. The scripts refuse, and the bundle leaves them out.
TEST(LaunchScripts, TensorParallelCandidatesAreRefused) {
    const TuneCandidate tp2 = candidate(Scheme::OneFOneB, 4, 1, 1, true, 1, 2);
    const std::string script = torchrunScript(gpt3_13b(), tp2, "p.json", {});
    EXPECT_FALSE(mentions(script, "torchrun --nnodes"));
    EXPECT_TRUE(mentions(script, "tensor parallelism")) << script;
    const fs::path dir = scratch("tp");
    auto written = writeLaunchBundle(dir.string(), gpt3_13b(), tp2, test::unitPlan(Scheme::OneFOneB, 4, 8), {});
    ASSERT_TRUE(written.ok()) << written.error().message;
    EXPECT_TRUE(mentions(*written, "no launch scripts: tp = 2")) << *written;
    EXPECT_TRUE(fs::is_regular_file(dir / "megatron_args.txt"));
    EXPECT_TRUE(mentions(readFile(dir / "megatron_args.txt"), "--tensor-model-parallel-size 2"));
    EXPECT_FALSE(fs::exists(dir / "launch_torchrun.sh"));
    EXPECT_FALSE(fs::exists(dir / "launch_slurm.sh"));
    fs::remove_all(dir);
}

// The scripts train the tuned model, not the executor's toy default.
TEST(LaunchScripts, PassTheModelAndPrecision) {
    EXPECT_EQ(executorModelSpec(gpt3_13b().model), "layers=40,hidden=5120,heads=40,seq=2048,vocab=50257");
    EXPECT_TRUE(mentions(executorModelSpec(llama3_8b().model), ",flavor=llama"));
    LaunchOptions options;
    options.model_spec = executorModelSpec(gpt3_13b().model);
    options.dtype = "bfloat16";
    const std::string script =
        torchrunScript(gpt3_13b(), candidate(Scheme::OneFOneB, 4, 2, 1, true), "p.json", options);
    EXPECT_TRUE(mentions(script, "--model layers=40,hidden=5120,heads=40,seq=2048,vocab=50257 --dtype bfloat16"))
        << script;
}

TEST(LaunchBundle, BadDirectoryIsNamedInTheError) {
    const fs::path root = scratch("bad");
    fs::create_directories(root);
    std::ofstream(root / "blocker") << "a file, not a directory";
    const std::string bad = (root / "blocker" / "bundle").string();
    auto written = writeLaunchBundle(bad, gpt3_13b(), candidate(Scheme::OneFOneB, 4, 2, 1, false),
                                     test::unitPlan(Scheme::OneFOneB, 4, 8), {});
    ASSERT_FALSE(written.ok());
    EXPECT_TRUE(mentions(written.error().message, bad)) << written.error().message;
    fs::remove_all(root);
}

}  // namespace
}  // namespace mario
