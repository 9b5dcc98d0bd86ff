// Megatron-LM arguments and torchrun / Slurm launch scripts for a tuned candidate. Flag
// spellings follow Megatron-LM's megatron/training/arguments.py.
#include "core/tune/LaunchExport.h"

#include <filesystem>
#include <sstream>
#include <string_view>
#include <system_error>

#include "core/io/PlanJson.h"
#include "core/io/TextFile.h"
#include "core/model/RankLayout.h"
#include "core/session/PlanBuilder.h"
#include "core/tune/Tuner.h"

namespace mario {
namespace {

// Bash word for an arbitrary string: bare when it only holds characters bash leaves alone,
// single-quoted otherwise (a quote inside becomes '\'').
std::string shellQuote(const std::string& text) {
    bool plain = !text.empty();
    for (char c : text) {
        const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                          std::string_view("_./:=,+-@%").find(c) != std::string_view::npos;
        plain = plain && safe;
    }
    if (plain) return text;
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// #SBATCH lines are read by sbatch, not by the shell, so quoting does not help there: spaces
// and newlines would end the value or the directive.
std::string sbatchValue(std::string text) {
    for (char& c : text)
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
    return text;
}

std::string worldComment(const TuneCandidate& candidate, const LaunchLayout& layout, const LaunchOptions& options) {
    std::ostringstream out;
    out << "# World size " << layout.world << " = pp " << candidate.pp << " x dp " << candidate.dp << " x tp "
        << candidate.tp << ", on " << layout.nodes << " node(s) x " << layout.per_node << " GPU(s)"
        << " (nodes of " << options.gpus_per_node << " GPUs).\n"
        << "# Rank layout (Megatron-LM's order, tensor parallel fastest, pipeline slowest):\n"
        << "#   rank = tp_rank + tp * (dp_replica + dp * pipeline_device), so rank r runs\n"
        << "#   pipeline device r / (tp*dp) = r / " << candidate.tp * candidate.dp
        << " of data-parallel replica (r / tp) % dp.\n";
    // The cost model judged the links on this same layout (core/model/RankLayout.h); say how, so
    // a cluster engineer can tell what the simulated step time assumed of the network.
    const NodeLocality locality = nodeLocality(candidate.pp, candidate.dp, candidate.tp, options.gpus_per_node);
    out << "# Simulated links: pipeline hops "
        << (locality.pipeline_in_node ? "all inside a node (NVLink)" : "cross nodes (InfiniBand paces them)");
    if (candidate.dp > 1)
        out << ", gradient all-reduce "
            << (locality.data_parallel_in_node ? "inside a node (NVLink)" : "across nodes (InfiniBand)");
    out << ".\n";
    return out.str();
}

constexpr const char* kShebang = "#!/usr/bin/env bash\n";

// The executor's command line after the launcher; PLAN and EXECUTOR are shell variables set
// earlier in the script so that the environment can override them.
std::string executorCommand(const LaunchOptions& options) {
    std::string command =
        "\"$EXECUTOR\" run \"$PLAN\" --backend cuda --iterations " + std::to_string(options.iterations);
    if (!options.model_spec.empty()) command += " --model " + shellQuote(options.model_spec);
    if (!options.dtype.empty()) command += " --dtype " + shellQuote(options.dtype);
    return command;
}

// Variables shared by both scripts; `planBase` is the directory a relative plan path is
// resolved against.
std::string commonVariables(const std::string& planFile, const std::string& planBase, const LaunchOptions& options) {
    std::ostringstream out;
    out << "PLAN=" << shellQuote(planFile) << "\n"
        << "PLAN=\"${MARIO_PLAN:-$PLAN}\"\n"
        << "[[ \"$PLAN\" == /* ]] || PLAN=\"" << planBase << "/$PLAN\"\n"
        << "EXECUTOR=" << shellQuote(options.executor) << "\n"
        << "EXECUTOR=\"${MARIO_EXECUTOR:-$EXECUTOR}\"\n"
        << "DEFAULT_PORT=" << shellQuote(options.master_port) << "\n";
    return out.str();
}

std::string refusal(const std::string& why) {
    return "echo " + shellQuote("mario: cannot launch: " + why) + " >&2\nexit 1\n";
}

// A parallel.layer_split other than even: the candidate plan's layers per chain position as
// Megatron-LM's first/last-stage counts (--decoder-first/last-pipeline-num-layers, the middle
// stages sharing the rest evenly) where they say it exactly, else one warning line. Empty for
// the even split, whose arguments stay as they were.
std::string layerSplitArguments(const Config& config, const TuneCandidate& candidate, bool interleaved) {
    if (config.parallel.layer_split.isEven() || config.model.layers <= 0) return {};
    auto plan = buildPlan(Tuner::configFor(config, candidate, {}));
    if (!plan) return "# warning: parallel.layer_split: " + plan.error().message + "\n";
    std::vector<int> chain = plan->pipelines.empty() ? std::vector<int>{} : plan->pipelines.front();
    if (chain.empty())
        for (const StageSpec& stage : plan->stages) chain.push_back(stage.index);
    std::vector<int> counts;
    std::string split;
    for (int stage : chain) {
        const auto layers = plan->stages[stage].layers.value_or(std::pair{0, 0});
        counts.push_back(layers.second - layers.first);
        split += (split.empty() ? "" : "-") + std::to_string(counts.back());
    }
    const int n = static_cast<int>(counts.size());
    bool exact = !interleaved && n == candidate.pp && n >= 2 && counts.front() > 0 && counts.back() > 0;
    for (int p = 2; exact && p + 1 < n; ++p) exact = counts[p] == counts[1];
    if (!exact)
        return "# warning: the plan's layer split " + split +
               " (parallel.layer_split) has no Megatron-LM flags here (they give the first and last stage's "
               "layers and split the rest evenly): Megatron-LM would run its own split; mario-executor runs the "
               "plan's.\n";
    return "# the plan's layer split " + split + " (parallel.layer_split)\n--decoder-first-pipeline-num-layers " +
           std::to_string(counts.front()) + "\n--decoder-last-pipeline-num-layers " + std::to_string(counts.back()) +
           "\n";
}

// The layout the executor's scripts launch, or why they cannot: mario-executor has no tensor
// parallelism, and run with WORLD_SIZE = pp·dp·tp it would take the tp ranks for data-parallel
// replicas of the whole model.
Result<LaunchLayout> executorLayout(const TuneCandidate& candidate, const LaunchOptions& options) {
    if (candidate.tp > 1)
        return makeError("tp = " + std::to_string(candidate.tp) +
                         " needs tensor parallelism, which mario-executor does not have; megatron_args.txt runs "
                         "this layout in Megatron-LM");
    return launchLayout(candidate, options);
}

}  // namespace

std::string executorModelSpec(const ModelConfig& model) {
    std::string spec = "layers=" + std::to_string(model.layers) + ",hidden=" + std::to_string(model.hidden) +
                       ",heads=" + std::to_string(model.heads);
    if (model.sequence_length > 0) spec += ",seq=" + std::to_string(model.sequence_length);
    if (model.vocab > 0) spec += ",vocab=" + std::to_string(model.vocab);
    if (model.gated_mlp) spec += ",flavor=llama";
    return spec;
}

Result<LaunchLayout> launchLayout(const TuneCandidate& candidate, const LaunchOptions& options) {
    if (candidate.pp < 1 || candidate.dp < 1 || candidate.tp < 1)
        return makeError("pp, dp and tp must be positive, got pp=" + std::to_string(candidate.pp) +
                         " dp=" + std::to_string(candidate.dp) + " tp=" + std::to_string(candidate.tp));
    if (options.gpus_per_node < 1)
        return makeError("GPUs per node must be positive, got " + std::to_string(options.gpus_per_node));
    if (options.nodes < 0) return makeError("nodes must not be negative, got " + std::to_string(options.nodes));
    LaunchLayout layout;
    layout.world = candidate.pp * candidate.dp * candidate.tp;
    layout.nodes =
        options.nodes > 0 ? options.nodes : (layout.world + options.gpus_per_node - 1) / options.gpus_per_node;
    if (layout.world % layout.nodes != 0)
        return makeError("world size " + std::to_string(layout.world) + " does not split evenly over " +
                         std::to_string(layout.nodes) + " nodes");
    layout.per_node = layout.world / layout.nodes;
    if (layout.per_node > options.gpus_per_node)
        return makeError("world size " + std::to_string(layout.world) + " needs " + std::to_string(layout.per_node) +
                         " GPUs on each of " + std::to_string(layout.nodes) + " nodes, which have " +
                         std::to_string(options.gpus_per_node));
    return layout;
}

std::string megatronArguments(const Config& config, const TuneCandidate& candidate) {
    const ModelConfig& model = config.model;
    const bool interleaved = candidate.scheme == Scheme::Interleaved && candidate.chunks > 1;
    const int chunks = interleaved ? candidate.chunks : 1;
    std::ostringstream out;
    auto flag = [&out](const std::string& name, auto value) { out << name << ' ' << value << '\n'; };

    out << "# Megatron-LM arguments for " << candidate.label() << (config.name.empty() ? "" : " (" + config.name + ")")
        << ", from Mario Workbench.\n"
        << "# One flag per line: pretrain_gpt.py $(grep -v '^#' megatron_args.txt) plus your data,\n"
        << "# tokenizer, optimizer and learning-rate flags, which the tuner does not choose.\n"
        << "# Data parallelism is not a flag: Megatron-LM derives dp = WORLD_SIZE / (tp * pp), so launch\n"
        << "# " << candidate.pp * candidate.dp * candidate.tp << " GPUs for dp = " << candidate.dp << ".\n";
    const SchemeInfo& scheme = schemeInfo(candidate.scheme);
    if (candidate.scheme == Scheme::Chimera)
        out << "# Chimera (two pipelines in opposite directions) has no Megatron-LM equivalent: these are\n"
            << "# the arguments of the closest schedule, 1F1B with the same pp = " << candidate.pp << ". Only\n"
            << "# mario-executor with the plan file runs Chimera itself.\n";
    else if (candidate.scheme == Scheme::GPipe)
        out << "# GPipe (all forwards, then all backwards) has no Megatron-LM schedule: these are the\n"
            << "# arguments of 1F1B with the same pp = " << candidate.pp << " (same stages, less activation memory).\n";
    else if (!scheme.megatron_schedule) {
        out << "# " << scheme.name << " (" << scheme.description << ") has no Megatron-LM\n"
            << "# schedule: these are the arguments of 1F1B with the same pp = " << candidate.pp << ". PyTorch's\n"
            << "# torch.distributed.pipelining runs it from the plan's CSV (mario export --csv), and\n"
            << "# mario-executor from the plan file.\n";
    }

    flag("--num-layers", model.layers);
    flag("--hidden-size", model.hidden);
    flag("--num-attention-heads", model.heads);
    if (model.kv_heads > 0 && model.kv_heads < model.heads) {
        out << "--group-query-attention\n";
        flag("--num-query-groups", model.kv_heads);
    }
    flag("--ffn-hidden-size", model.ffnHidden());
    if (model.sequence_length > 0) {
        flag("--seq-length", model.sequence_length);
        flag("--max-position-embeddings", model.sequence_length);
    }
    if (model.vocab > 0) {
        // Megatron pads it to a multiple of --make-vocab-size-divisible-by (128) times tp.
        out << "# --vocab-size is what NullTokenizer uses; with a real tokenizer, pass its files instead.\n";
        flag("--vocab-size", model.vocab);
    }
    if (model.gated_mlp) {
        // Megatron's defaults are GPT's (GELU, LayerNorm, learned positions, biases); the
        // gated-MLP models Mario knows (LLaMA family) differ in all four.
        out << "--swiglu\n";
        flag("--normalization", "RMSNorm");
        out << "--disable-bias-linear\n";
        flag("--position-embedding-type", "rope");
    }
    // Megatron ties the input embedding and the LM head unless told otherwise.
    if (!model.tied_embeddings) out << "--untie-embeddings-and-output-weights\n";

    flag("--tensor-model-parallel-size", candidate.tp);
    flag("--pipeline-model-parallel-size", candidate.pp);
    const int stages = candidate.pp * chunks;  // Mario's stages = Megatron's model chunks
    const bool even = model.layers > 0 && model.layers % stages == 0;
    const std::string split = layerSplitArguments(config, candidate, interleaved);
    out << split;
    if (!even && split.empty())
        out << "# warning: " << model.layers << " layers do not split evenly over " << stages
            << " stages; Megatron-LM needs an even split (or --decoder-first/last-pipeline-num-layers).\n";
    if (interleaved && even) flag("--num-layers-per-virtual-pipeline-stage", model.layers / stages);
    if (interleaved && config.parallel.group_size > 0 && config.parallel.group_size != candidate.pp)
        flag("--microbatch-group-size-per-virtual-pipeline-stage", config.parallel.group_size);

    const int global = config.parallel.global_batch_size > 0
                           ? config.parallel.global_batch_size
                           : candidate.micro_batch_size * candidate.dp * config.microbatchCount();
    flag("--micro-batch-size", candidate.micro_batch_size);
    flag("--global-batch-size", global);
    const int perReplica = candidate.micro_batch_size * candidate.dp;
    if (perReplica > 0 && global % perReplica != 0)
        out << "# warning: the global batch " << global << " is not a multiple of mbs x dp = " << perReplica << ".\n";
    else if (interleaved && perReplica > 0 && (global / perReplica) % candidate.pp != 0)
        out << "# note: older Megatron-LM releases need the micro-batch count (" << global / perReplica
            << ") divisible by pp with the interleaved schedule.\n";
    if (candidate.tp > 1) out << "--sequence-parallel\n";
    // The cost model's FLOP rates and byte counts are bf16's.
    out << "--bf16\n";
    if (config.parallel.distributed_optimizer) out << "--use-distributed-optimizer\n";

    if (candidate.checkpoint) {
        const int perStage = model.layers > 0 ? (model.layers + stages - 1) / stages : 1;
        out << "# Mario checkpoints whole stages (keeps each stage's input, recomputes the stage before its\n"
            << "# backward); Megatron-LM's closest is full recomputation with one unit per stage. Megatron has\n"
            << "# no bubble-aware placement (Mario's passes move recomputation into pipeline bubbles), so the\n"
            << "# Mario schedule itself is only reproduced by mario-executor with the plan file.\n";
        flag("--recompute-granularity", "full");
        flag("--recompute-method", "uniform");
        flag("--recompute-num-layers", perStage);
    }
    return out.str();
}

std::string torchrunScript(const Config& config, const TuneCandidate& candidate, const std::string& planFile,
                           const LaunchOptions& options) {
    std::ostringstream out;
    out << kShebang << "# Mario Workbench launch with torchrun for " << candidate.label()
        << (config.name.empty() ? "" : " (" + config.name + ")") << ".\n";
    const auto layout = executorLayout(candidate, options);
    if (!layout.ok()) {
        out << "set -euo pipefail\n" << refusal(layout.error().message);
        return out.str();
    }
    out << worldComment(candidate, *layout, options)
        << "# Run this script once on every node with MASTER_ADDR set to the first node's address\n"
        << "# (localhost by default, right for a single node). MARIO_PLAN, MARIO_EXECUTOR and\n"
        << "# MASTER_PORT override the plan, the executor and the port.\n"
        << "set -euo pipefail\n\n"
        << "SCRIPT_DIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n"
        << commonVariables(planFile, "$SCRIPT_DIR", options) << "JOB_NAME=" << shellQuote(options.job_name) << "\n"
        << "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n"
        << "MASTER_PORT=\"${MASTER_PORT:-$DEFAULT_PORT}\"\n\n"
        // --no-python: the executor is a native binary that reads RANK, WORLD_SIZE, LOCAL_RANK,
        // MASTER_ADDR and MASTER_PORT, which torchrun sets for every process it starts.
        << "exec torchrun --nnodes " << layout->nodes << " --nproc-per-node " << layout->per_node << " \\\n"
        << "  --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" --rdzv-id \"${RDZV_ID:-$JOB_NAME}\" \\\n"
        << "  --no-python " << executorCommand(options) << "\n";
    return out.str();
}

std::string slurmScript(const Config& config, const TuneCandidate& candidate, const std::string& planFile,
                        const LaunchOptions& options) {
    std::ostringstream out;
    out << kShebang;
    const auto layout = executorLayout(candidate, options);
    if (layout.ok()) {
        // sbatch reads #SBATCH lines only up to the first command, so they come first.
        out << "#SBATCH --job-name=" << sbatchValue(options.job_name) << "\n"
            << "#SBATCH --nodes=" << layout->nodes << "\n"
            << "#SBATCH --ntasks-per-node=" << layout->per_node << "\n"
            << "#SBATCH --gpus-per-node=" << layout->per_node << "\n"
            << "#SBATCH --time=" << sbatchValue(options.time_limit) << "\n";
        if (!options.partition.empty()) out << "#SBATCH --partition=" << sbatchValue(options.partition) << "\n";
        out << "#SBATCH --exclusive\n";
    }
    out << "# Mario Workbench launch with Slurm for " << candidate.label()
        << (config.name.empty() ? "" : " (" + config.name + ")") << ".\n";
    if (!layout.ok()) {
        out << "set -euo pipefail\n" << refusal(layout.error().message);
        return out.str();
    }
    out << worldComment(candidate, *layout, options)
        << "# Submit with sbatch from the directory holding the plan (sbatch runs a copy of this script,\n"
        << "# so a relative plan path is taken from the submission directory).\n"
        << "set -euo pipefail\n\n"
        << ": \"${SLURM_JOB_NODELIST:?submit this script with sbatch}\"\n"
        << commonVariables(planFile, "${SLURM_SUBMIT_DIR:-$PWD}", options)
        << "MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n"
        << "MASTER_PORT=\"${MASTER_PORT:-$DEFAULT_PORT}\"\n"
        << "export MASTER_ADDR MASTER_PORT\n\n"
        // One task per GPU; the rank variables differ per task, so they are set inside the task.
        // The command travels as "$@" to keep the fixed bash -c text free of user strings.
        << "# The single quotes are deliberate: the rank variables expand inside each task.\n"
        << "# shellcheck disable=SC2016\n"
        << "srun --kill-on-bad-exit=1 bash -c \\\n"
        << "  'export RANK=\"$SLURM_PROCID\" WORLD_SIZE=\"$SLURM_NTASKS\" LOCAL_RANK=\"$SLURM_LOCALID\"; exec \"$@\"' \\\n"
        << "  mario-rank " << executorCommand(options) << "\n";
    return out.str();
}

Result<std::string> writeLaunchBundle(const std::string& directory, const Config& config,
                                      const TuneCandidate& candidate, const Plan& plan, const LaunchOptions& options) {
    namespace fs = std::filesystem;
    const fs::path dir(directory);
    std::error_code error;
    fs::create_directories(dir, error);
    if (error || !fs::is_directory(dir, error))
        return makeError(directory + ": cannot create the directory" + (error ? ": " + error.message() : ""));
    // The layout is checked here so that a bundle is never written with scripts that refuse.
    const auto layout = launchLayout(candidate, options);
    if (!layout.ok()) return makeError(directory + ": " + layout.error().message);

    const std::string planName = "plan.mario.json";
    if (auto written = writePlanFile(plan, (dir / planName).string()); !written.ok()) return written.error();
    if (auto written = writeTextFile((dir / "megatron_args.txt").string(), megatronArguments(config, candidate),
                                     "the Megatron-LM arguments");
        !written.ok())
        return written.error();
    // Scripts that would only refuse are not written; the plan and Megatron's arguments still help.
    if (auto executable = executorLayout(candidate, options); !executable)
        return "plan and Megatron-LM arguments; no launch scripts: " + executable.error().message;
    if (auto written =
            writeTextFile((dir / "launch_torchrun.sh").string(), torchrunScript(config, candidate, planName, options),
                          "the torchrun script", {.executable = true});
        !written.ok())
        return written.error();
    if (auto written =
            writeTextFile((dir / "launch_slurm.sh").string(), slurmScript(config, candidate, planName, options),
                          "the Slurm script", {.executable = true});
        !written.ok())
        return written.error();
    return std::string("plan, Megatron-LM arguments, torchrun and Slurm scripts");
}

}  // namespace mario
