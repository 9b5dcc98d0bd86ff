#pragma once
// Cluster exports of a tuned configuration (issue 4, "Exports of the winner for clusters"):
// Megatron-LM arguments that reproduce the parallel layout as closely as Megatron can, and
// torchrun / Slurm scripts that run the plan itself with `mario-executor`, which is the only
// way to get Mario's schedule (bubble-aware checkpoint placement, prepose-forward, Chimera).
//
// Rank layout of the launch scripts: core/model/RankLayout.h, Megatron-LM's default order, so
// that a Megatron run and a Mario run of the same candidate put the same work on the same GPU,
// and the cost model costed the links of exactly this layout.
#include <string>

#include "core/model/Config.h"
#include "core/schedule/Plan.h"
#include "core/tune/TuneTypes.h"
#include "core/util/Result.h"

namespace mario {

struct LaunchOptions {
    int gpus_per_node = 8;  // callers pass the config's hardware.gpus_per_node, the simulated one
    int nodes = 0;          // 0: derive from pp·dp·tp / gpus_per_node, rounded up
    std::string executor = "mario-executor";
    std::string master_port = "29500";
    int iterations = 10;
    std::string model_spec;  // passed as --model when non-empty ("tiny", "layers=8,hidden=64,…")
    std::string dtype;       // passed as --dtype when non-empty ("bfloat16")
    std::string job_name = "mario";
    std::string partition;  // Slurm partition; left to the cluster's default when empty
    std::string time_limit = "01:00:00";
};

// The executor's --model text for a model (executor/ModelSpec.h reads it; a test in
// tests/executor holds the two to one format): layers, hidden, heads, sequence length, vocabulary,
// and the LLaMA flavour for gated MLPs. The executor's block has no grouped-query attention and
// derives its FFN width (4·hidden, or LLaMA's 8/3·hidden), so GQA models run with full heads.
std::string executorModelSpec(const ModelConfig& model);

// How the pp·dp·tp processes spread over nodes. torchrun and Slurm both start the same number
// of processes on every node, so the world has to split evenly.
struct LaunchLayout {
    int world = 1;  // processes = GPUs = pp·dp·tp
    int nodes = 1;
    int per_node = 1;  // processes (and GPUs) per node
};

// Fails, in words, when a size is not positive or the world does not split evenly over the
// nodes (e.g. 9 processes on 8-GPU nodes, or 64 processes forced onto 4 nodes of 8 GPUs).
Result<LaunchLayout> launchLayout(const TuneCandidate& candidate, const LaunchOptions& options);

// Megatron-LM (pretrain_gpt.py) arguments, one flag with its value per line, comment lines
// starting with '#'. Use as `$(grep -v '^#' megatron_args.txt)`; values never contain spaces.
// Only the model shape, the parallel layout, the batch and recomputation are given: data,
// tokenizer, optimizer and learning-rate flags are the user's. GPipe and Chimera have no
// Megatron schedule and come out as 1F1B with the same pp, with a comment saying so.
std::string megatronArguments(const Config& config, const TuneCandidate& candidate);

// Bash scripts (set -euo pipefail) that run `EXECUTOR run PLAN --backend cuda` on every GPU.
// With tp > 1 they only say why they cannot (the executor has no tensor parallelism).
// A relative planFile is looked up next to the torchrun script, and in the Slurm submission
// directory for the Slurm script (sbatch runs a copy of the script from its spool directory).
// When the layout is impossible the script only prints why and exits 1.
std::string torchrunScript(const Config& config, const TuneCandidate& candidate, const std::string& planFile,
                           const LaunchOptions& options);
std::string slurmScript(const Config& config, const TuneCandidate& candidate, const std::string& planFile,
                        const LaunchOptions& options);

// Writes plan.mario.json, megatron_args.txt, launch_torchrun.sh and launch_slurm.sh (the two
// scripts executable) into `directory`, creating it. Every error names the path at fault.
// Returns what it wrote, in words: without the scripts when the executor cannot run the layout
// (tp > 1), saying why.
Result<std::string> writeLaunchBundle(const std::string& directory, const Config& config,
                                      const TuneCandidate& candidate, const Plan& plan, const LaunchOptions& options);

}  // namespace mario
