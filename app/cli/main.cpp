// `mario`: the command-line face of mario::core. Links only core, so it runs on cluster
// nodes and CI machines without Qt.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/CliError.h"
#include "app/cli/Commands.h"
#include "core/passes/PassRegistry.h"
#include "core/sweep/SweepKnob.h"

namespace {

constexpr const char* kHelpText = R"(mario — pipeline-parallel schedules with near zero-cost activation checkpointing

usage:
  mario simulate FILE [--passes LIST] [--json] [--width N] [--time-ms MS]
        FILE is a config (*.config.json) or a plan (*.mario.json). Prints a summary and an
        ASCII Gantt chart, or with --json one object: makespan, bubble_ratio, lower_bound,
        tight_lower_bound, over_lower_bound, recompute_ms, recompute_hidden,
        hide_bound (with the hide pass: no placement of the Rs within its budget is faster),
        reorder_bound (with the reorder pass: no order, checkpointing or placement of the Rs
        within the budget is faster; docs/reorder.md#the-bound),
        throughput (= samples_per_s), tokens_per_s, parameters, model_flops_per_step, gpus,
        tflops_per_gpu, mfu, hfu (null where not known: unit costs, profiles), contention_ms,
        contention_rounds, contention_settled, alone_makespan (devices that share hardware:
        what their contention added, and the step timed alone), simulate_us (the simulator's
        best time: of up to 7 runs, or with --time-ms of every run within MS ms), passes_us,
        devices[{index, busy, idle, contention_ms, peak_memory_bytes}],
        stages[] (as a plan file's: device, layers, F/B/W/R ms, memory terms).
  mario plan CONFIG [--passes LIST] -o PLAN      generate a plan file
  mario validate PLAN                            check a plan (exit 3 when it deadlocks)
  mario export FILE --chrome-trace OUT            a Perfetto / chrome://tracing trace
  mario export FILE --csv OUT [--format compute_only|compute_comms] [--drop-recompute]
        a schedule CSV that PyTorch's torch.distributed.pipelining loads (_load_csv), one
        line per rank: compute_only (default) holds F, B, I, W; compute_comms the same order
        lowered as PyTorch lowers it, with SEND_F/RECV_F/SEND_B/RECV_B and REDUCE_GRAD.
        Refuses plans that PyTorch cannot run: recomputation (R; --drop-recompute writes the
        order without it) and more than one stage chain (chimera, dualpipe).
  mario import CSV [--config FILE] -o PLAN
        a PyTorch schedule CSV (either format; an OVERLAP_F_B cell of one forward and one
        backward stays an overlapped pair; UNSHARD/RESHARD, REDUCE_GRAD and SEND/RECV cells
        are dropped, Mario adds its own communication). Ranks become devices; which rank runs each stage comes from
        the file. Without --config every stage has unit costs (forward 1, backward 2,
        recompute 1); with --config (a config or plan) its stages and costs, whose placement
        must match the file's. Prints what it dropped or assumed.
  mario tune CONFIG [--devices N] [--memory 40G] [--threads K] [--top K] [--tp] [--json]
             [--schemes LIST] [--pp N|MIN-MAX] [--micro-batch-sizes LIST] [--passes LIST]
             [-o best.mario.json] [--export DIR] [--progress-every SECONDS]
        search scheme × PP × DP × micro-batch size × checkpointing (× TP with --tp) under the
        memory limit, or only the schemes, pipeline depths and micro-batch sizes named; the
        checkpointed candidates run the passes named (with checkpoint; default
        all,bound-w,hide,reorder, prepose, hide and reorder only on the best few; none: no
        checkpointing); ranks
        by simulated throughput (with MFU) and lists the best of each scheme; --export writes
        the winner's plan, Megatron-LM arguments and torchrun/Slurm launch scripts for
        mario-executor. Progress: a bar on a terminal; elsewhere (a log, a pipe, --json) a
        line on stderr every --progress-every seconds (default 5, any number in (0, 86400]),
        "tune: 120/410 candidates after 5 s, best 12.34 samples/s", and once the search has
        printed one, a last line where it ended.
  mario sweep CONFIG --vary KEY=V1,V2,…|MIN:MAX[:STEP] [--vary …] [--schemes LIST]
             [--passes LIST[;LIST…]] [--threads K] [--json | --csv OUT] [--plot OUT.svg]
             [--metric throughput|step|mfu|peak]
        simulate CONFIG with one or two knobs varied (every combination), for each scheme
        (1f1b,interleaved:2 — NAME:CHUNKS) and pass set (none;all), each point exactly as
        `mario simulate` of the edited config. KEY is a config key (parallel.micro_batch_size,
        or its last part when unique); KNOBS below. Prints a table (refused points keep their
        reason), or --json one object with points[] ({values, scheme, passes, makespan,
        samples_per_s, tokens_per_s, mfu, bubble_ratio, peak_memory_bytes, fullest_device,
        budget_bytes, fits_memory, devices, refusal}); --csv writes the same rows; --plot a
        line chart of --metric (SVG only: PNG needs a rasteriser, which the Qt-free CLI lacks).
        Exit 2 when every point is refused.
  mario capacity CONFIG --grow KEY[=MIN:MAX[:STEP]] [--schemes LIST] [--passes LIST[;LIST…]]
                 [--scan] [--threads K] [--json] [--plot OUT.svg]
        the largest KEY on the grid MIN, MIN+STEP, … MAX (default 1:the key's limit:1) whose
        simulated peak fits memory_limit_gb (else the card), per scheme and pass set: doubling
        from MIN, then bisection, then a check that the values below fit and those above the
        first miss do not (spot check; --scan: every value). Prints the step, MFU and peak
        there and what the next value needs on which device; --plot charts the peak memory
        against KEY with the limit and each answer ringed. KEY is a knob marked [grows memory]
        below.
        Exit 4 when not even MIN fits for any scheme and pass set.
  mario --help | --version

PASSES_HERE
KNOBS_HERE
exit codes: 0 success, 2 bad input (one line on stderr says what and where; also any internal
            error), 3 deadlock, 4 the tuner found nothing that fits, or capacity not even MIN
            (the line names the closest miss). mario-executor shares the table and adds 5, a run
            that failed.
limits: sizes beyond any real run are refused with the limit in the message (docs/limits.md):
        e.g. 16384 micro-batches per step, 1024 pipeline devices, 65536 devices in all.
)";

// The passes paragraph, from the pass table (core/passes/PassRegistry.h): every pass, its
// names and what it does, so the help never misses one.
std::string passesHelp() {
    std::string text =
        "passes: LIST is a comma-separated subset of the passes below, \"all\" (the paper's four) or\n"
        "        \"none\"; e.g. --passes all,bound-w,hide. Without --passes the file's own setting applies.\n";
    for (const mario::PassInfo& info : mario::passTable()) {
        const std::string entry = std::string(info.name) + " (" + std::string(info.long_name) +
                                  (info.beyond_paper ? ", beyond the paper" : "") + "): " + std::string(info.tooltip);
        // Wrapped at 96 columns, continuation lines indented under the entry.
        std::string line = "        ";
        std::size_t from = 0;
        while (from < entry.size()) {
            std::size_t to = entry.find(' ', from);
            if (to == std::string::npos) to = entry.size();
            const std::string word = entry.substr(from, to - from);
            if (line.size() + word.size() > 96 && line.find_first_not_of(' ') != std::string::npos) {
                text += line.substr(0, line.size() - 1) + "\n";  // without the trailing space
                line = "          ";
            }
            line += word + " ";
            from = to + 1;
        }
        text += line.substr(0, line.size() - 1) + "\n";
    }
    return text;
}

// The knobs paragraph, from the knob table (core/sweep/SweepKnob.h).
std::string knobsHelp() {
    std::string text = "knobs: what mario sweep --vary and mario capacity --grow take (config keys):\n";
    for (const mario::SweepKnob& knob : mario::sweepKnobs())
        text += "        " + std::string(knob.key) +
                (knob.words.empty() ? std::string{} : " (" + std::string(knob.words) + ")") + ": " +
                std::string(knob.about) + (knob.grows_memory ? " [grows memory]" : "") + "\n";
    return text;
}

const std::string kHelp = [] {
    std::string text = kHelpText;
    for (auto [marker, replacement] : {std::pair<std::string, std::string>{"PASSES_HERE\n", passesHelp()},
                                       {"KNOBS_HERE\n", knobsHelp()}})
        text.replace(text.find(marker), marker.size(), replacement);
    return text;
}();

// One command's part of kHelp: from its "  mario COMMAND" line to the next command's
// ("mario simulate --help").
std::string commandHelp(const std::string& command) {
    const std::string text = kHelp;
    const std::string start = "\n  mario " + command + " ";
    std::size_t from = text.find(start);
    if (from == std::string::npos) return {};
    std::size_t to = from + 1;
    for (std::size_t next; (next = text.find("\n  mario ", to)) != std::string::npos;) {
        if (text.compare(next + 9, command.size() + 1, command + " ") != 0) {
            to = next;
            break;
        }
        to = next + 1;  // the same command on its next line (export's two forms)
    }
    if (to == from + 1) to = text.find("\n\n", from);
    return "usage:" + text.substr(from, to - from) + "\n";
}

}  // namespace

namespace mario::cli {

int fail(int code, const std::string& message) {
    std::cerr << "mario: " << message << "\n";
    return code;
}

}  // namespace mario::cli

namespace {

int runCommand(int argc, char** argv) {
    using namespace mario::cli;
    const std::string executable = argc > 0 ? argv[0] : "mario";
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cerr << kHelp;
        return kBadInput;
    }
    const std::string command = args.front();
    const Args rest(args.begin() + 1, args.end());
    if (command == "--help" || command == "-h" || (command == "help" && rest.empty())) {
        std::cout << kHelp;
        return kOk;
    }
    if (command == "--version") {
        std::cout << "mario " << MARIO_VERSION << "\n";
        return kOk;
    }
    // "mario simulate --help", "mario help simulate": that command's usage, exit 0.
    const bool wantsHelp = std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
                           std::find(rest.begin(), rest.end(), "-h") != rest.end();
    if (wantsHelp || (command == "help" && rest.size() == 1)) {
        const std::string about = commandHelp(command == "help" ? rest.front() : command);
        if (about.empty()) return fail(kBadInput, "no help for \"" + command + "\" (try mario --help)");
        std::cout << about;
        return kOk;
    }
    if (command == "simulate") return simulateCommand(rest, executable);
    if (command == "plan") return planCommand(rest, executable);
    if (command == "validate") return validateCommand(rest, executable);
    if (command == "export") return exportCommand(rest, executable);
    if (command == "import") return importCommand(rest, executable);
    if (command == "tune") return tuneCommand(rest, executable);
    if (command == "sweep") return sweepCommand(rest, executable);
    if (command == "capacity") return capacityCommand(rest, executable);
    return fail(kBadInput, "unknown command \"" + command + "\" (try mario --help)");
}

}  // namespace

// The last resort: whatever escapes a command (an allocation failure above all) ends in one
// line and the bad-input code, never in std::terminate's abort and core dump.
int main(int argc, char** argv) {
    try {
        return runCommand(argc, argv);
    } catch (const std::bad_alloc&) {
        return mario::cli::fail(mario::kBadInput, "internal error: out of memory");
    } catch (const std::exception& e) {
        return mario::cli::fail(mario::kBadInput, std::string("internal error: ") + e.what());
    } catch (...) {
        return mario::cli::fail(mario::kBadInput, "internal error (an unknown exception)");
    }
}
