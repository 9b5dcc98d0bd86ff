// mario-executor: runs a plan on LibTorch stages.
//   mario-executor run PLAN --backend cpu|cuda [--model SPEC] [--iterations N] [--reference]
//                           [--seed S] [--lr LR] [--recv-timeout-s T] [--optimizer sgd|adam]
//                           [--dp N] [--dtype float64|float32|bfloat16] [--tokens FILE] [--events]
//                           [--partition-sms [--shared-streams]] [--dump-step DIR]
// Without WORLD_SIZE all devices (× --dp replicas) run in this process: CPU threads, or one GPU
// with a stream per device; --partition-sms gives each its own SM partition (docs/gpu.md), and
// --shared-streams lets it run on shared SMs where the GPU cannot be partitioned. Under torchrun/srun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT) each process runs one device of one replica: Megatron's rank order, PyTorch's c10d
// (Gloo between CPU processes, NCCL between GPUs). --dump-step DIR writes the step for PyTorch's runtime to
// repeat (executor/StepDump.h): one iteration, float64, one process.
//   mario-executor profile --model SPEC [--micro-batch-size B] [--max-blocks K] [--repeats R]
//                          [--seed S] [--name NAME] [--device cpu|cuda:N] [--dtype T] [--optimizer sgd|adam]
//                          [--partition-sms K] [--neighbours N] -o OUT.profile.json
// profile measures stages of 1..K blocks on the CPU or a GPU (--partition-sms K: on one of K SM
// partitions; --neighbours N: alone and again beside N threads running the same blocks, or N of the
// other partitions (default all), for the stages' contention) and writes a "mario-profile" v1 document
// (core/io/ProfileJson.h); one summary line on stdout with every fit's R², a warning line
// on stderr per fit below R² 0.99; bad arguments: one line, exit 2.
//   mario-executor calibrate [--device cpu|cuda:N] [--model SPEC] [--quick] ... -o PRESET.json
// calibrate measures this CPU or GPU and writes a hardware preset for core's analytical model
// (executor/CalibrationCli.h, docs/calibration.md).
//   mario-executor capabilities      (or --capabilities)
// prints one JSON line saying what this binary can run (CUDA and its GPUs, SM partitions, NCCL,
// versions, and why not where it cannot): core/io/ExecutorCapabilities.h; the workbench asks it
// before offering "Run on one GPU".
// The last stdout line is one JSON summary; --events streams JSON lines before it (a hello with
// the protocol version, every instruction's start/end, a summary per iteration): the live-event
// protocol, whose one owner is core/io/LiveEvents.h.
// Exit codes (core/util/ExitCode.h, shared with `mario`; docs/exit-codes.md): 0 ok, 2 usage, an
// unreadable, malformed or out-of-range plan or token file, a launch, thread count or memory
// estimate the run cannot have (RunRefusals.h), an output that cannot be written, and the
// last-resort handler; 3 the plan deadlocks; 5 the run started and a worker or rank failed (the
// line names the rank that failed first). Every refusal is one line on stderr.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/LiveEvents.h"
#include "core/io/PlanJson.h"
#include "core/io/TextFile.h"
#include "core/sim/Validator.h"
#include "core/util/ExitCode.h"
#include "executor/Backend.h"
#include "executor/CalibrationCli.h"
#include "executor/Capabilities.h"
#include "executor/DistributedRunner.h"
#include "executor/Executor.h"
#include "executor/LaunchEnv.h"
#include "executor/OptionValues.h"
#include "executor/ProfileGuards.h"
#include "executor/Profiler.h"
#include "executor/RunRefusals.h"

namespace {

constexpr const char* kRunUsage =
    "usage: mario-executor run PLAN --backend cpu|cuda [--model SPEC] [--iterations N] [--reference] "
    "[--seed S] [--lr LR] [--recv-timeout-s T] [--optimizer sgd|adam] [--dp N] [--dtype T] "
    "[--tokens FILE] [--events] [--partition-sms [--shared-streams]] [--dump-step DIR]";
constexpr const char* kProfileUsage =
    "usage: mario-executor profile --model SPEC [--micro-batch-size B] [--max-blocks K] [--repeats R] "
    "[--seed S] [--name NAME] [--device cpu|cuda:N] [--dtype T] [--optimizer sgd|adam] [--partition-sms K] "
    "[--neighbours N] -o OUT.profile.json";

// One line, as every refusal (docs/exit-codes.md): the usage is what --help prints.
int usage(const std::string& why) {
    std::cerr << "mario-executor: " << why << " (mario-executor run --help prints the usage)" << std::endl;
    return mario::kBadInput;
}

using mario::exec::commandLineOf;
using mario::exec::integerOption;
using mario::exec::nextValue;
using mario::exec::numberOption;
using mario::exec::seedOption;

// An option's value, or the one line that says why not (thrown to the option loop's handler).
template <class T>
T checked(mario::Result<T> value) {
    if (!value) throw std::invalid_argument(value.error().message);
    return *value;
}

// --optimizer's names, for run and profile alike: true for Adam, false for SGD, nullopt else.
std::optional<bool> parseAdam(const std::string& name) {
    if (name == "adam") return true;
    if (name == "sgd") return false;
    return std::nullopt;
}

int profileUsage(const std::string& why) {
    std::cerr << "mario-executor profile: " << why << std::endl;
    return mario::kBadInput;
}

int profileMain(int argc, char** argv) {
    mario::exec::ProfileOptions options;
    std::string out;
    options.command_line = commandLineOf(argc, argv);
    try {
        for (int i = 2; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&] { return nextValue(argc, argv, i); };
            if (arg == "--model") {
                auto spec = mario::exec::parseModelSpec(value());
                if (!spec) return profileUsage(spec.error().message);
                options.model = *spec;
            } else if (arg == "--micro-batch-size")
                options.micro_batch_size = checked(integerOption(arg, value(), 1, 65536));
            else if (arg == "--max-blocks")
                options.max_blocks = checked(integerOption(arg, value(), 1, mario::exec::kMaxProfileBlocks));
            else if (arg == "--repeats") options.repeats = checked(integerOption(arg, value(), 1, 100000));
            else if (arg == "--seed") options.seed = checked(seedOption(arg, value()));
            else if (arg == "--name") options.name = value();
            else if (arg == "--device") options.device = value();
            else if (arg == "--dtype") options.dtype = value();
            else if (arg == "--help" || arg == "-h") {
                std::cout << kProfileUsage << "\n";
                return mario::kOk;
            } else if (arg == "--optimizer") {
                const auto adam = parseAdam(value());
                if (!adam) return profileUsage("--optimizer is sgd or adam");
                options.adam = *adam;
            } else if (arg == "--partition-sms") {
                options.partitions = checked(integerOption(arg, value(), 1, 1024));
            } else if (arg == "--neighbours") {
                options.neighbours = checked(integerOption(arg, value(), 0, 1024));
            } else if (arg == "-o" || arg == "--output") out = value();
            else return profileUsage("unknown option " + arg);
        }
    } catch (const std::exception& e) {
        return profileUsage(e.what());
    }
    if (auto dtype = mario::exec::dtypeOption(options.dtype, options.device.rfind("cuda", 0) == 0); !dtype)
        return profileUsage(dtype.error().message);
    if (out.empty()) return profileUsage("-o OUT.profile.json is required");
    auto result = mario::exec::profileModel(options);
    if (!result) return profileUsage(result.error().message);
    // Through core's one writer: a write error leaves the old profile whole (TextFile.h).
    if (auto written = mario::writeTextFile(out, result->profile.dump(2) + "\n", "the profile"); !written)
        return profileUsage(written.error().message);
    const auto& p = result->profile;
    const auto fits = mario::exec::fitQualities(*result);
    for (const std::string& line : mario::exec::lowFitWarnings(fits))
        std::cerr << "mario-executor profile: warning: " << line << std::endl;
    std::cout << nlohmann::json{{"profile", out},
                                {"model", p["model"]},
                                {"hardware", p["hardware"]},
                                {"blocks", result->points.size()},
                                {"forward_ms", p["forward_ms"]},
                                {"backward_ms", p["backward_ms"]},
                                {"contention", result->contention},
                                {"r2", p["source"]["r2"]}}
                     .dump()
              << std::endl;
    return mario::kOk;
}

// Reads and checks the plan: a structural problem is bad input (2), a deadlock has its own code
// (3), as in `mario validate`.
int loadPlan(const std::string& path, mario::Plan& plan) {
    auto read = mario::readPlanFile(path, {.validate = false});
    if (!read) {
        std::cerr << "mario-executor: " << read.error().message << std::endl;
        return mario::kBadInput;
    }
    const mario::ValidationReport report = mario::Validator::validate(*read);
    if (!report.ok()) {
        std::cerr << "mario-executor: " << path << ": " << report.summary() << std::endl;
        return report.issues.empty() ? mario::kDeadlock : mario::kBadInput;
    }
    plan = std::move(*read);
    return mario::kOk;
}

int runMain(int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::cout << kRunUsage << "\n";
            return mario::kOk;
        }
    if (argc < 3 || std::string(argv[1]) != "run") return usage("expected: run PLAN");
    const std::string planPath = argv[2];
    mario::exec::ExecutorOptions options;
    std::string backendArg = "cpu";
    bool events = false;  // live JSON lines (hello, instructions, iterations) before the summary
    try {
        for (int i = 3; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&] { return nextValue(argc, argv, i); };
            if (arg == "--backend") backendArg = value();
            else if (arg == "--model") {
                auto spec = mario::exec::parseModelSpec(value());
                if (!spec) return usage(spec.error().message);
                options.model = *spec;
            } else if (arg == "--iterations") options.iterations = checked(integerOption(arg, value(), 1, 1'000'000));
            else if (arg == "--seed") options.seed = checked(seedOption(arg, value()));
            else if (arg == "--lr") options.lr = checked(numberOption(arg, value(), 0, 1000));
            else if (arg == "--recv-timeout-s") options.recv_timeout_s = checked(numberOption(arg, value(), 0, 86400));
            else if (arg == "--reference") options.reference = true;
            else if (arg == "--dp") options.data_parallel = checked(integerOption(arg, value(), 1, 256));
            else if (arg == "--dtype") options.dtype = value();
            else if (arg == "--tokens") options.tokens_file = value();
            else if (arg == "--events") events = true;
            else if (arg == "--partition-sms") options.partition_sms = true;
            else if (arg == "--shared-streams") options.shared_streams_fallback = true;
            else if (arg == "--dump-step") options.dump_step_dir = value();
            else if (arg == "--optimizer") {
                const auto adam = parseAdam(value());
                if (!adam) return usage("--optimizer is sgd or adam");
                options.adam = *adam;
            } else return usage("unknown option " + arg);
        }
    } catch (const std::exception& e) {
        return usage(e.what());
    }
    // Parsed once: from here on the backend is an enum, never a spelling.
    const auto backend = mario::exec::parseBackend(backendArg);
    if (!backend) return usage(backend.error().message);
    if (auto dtype = mario::exec::dtypeOption(options.dtype, *backend == mario::exec::Backend::Cuda); !dtype)
        return usage(dtype.error().message);
    // Each replica is a thread per device and each iteration a whole step: bounds that no real
    // run reaches, so that a typo ends in one line instead of a machine out of threads or time.
    if (options.iterations < 1 || options.iterations > 1'000'000)
        return usage("--iterations must be in [1, 1000000] (got " + std::to_string(options.iterations) + ")");
    if (options.data_parallel < 1 || options.data_parallel > 256)
        return usage("--dp must be in [1, 256] (got " + std::to_string(options.data_parallel) + ")");
    if (!(options.recv_timeout_s > 0 && options.recv_timeout_s <= 86400))
        return usage("--recv-timeout-s must be in (0, 86400] seconds");
    if (!options.dump_step_dir.empty())
        if (auto fits = mario::exec::dumpStepFits(options.iterations, options.dtype); !fits)
            return usage(fits.error().message);
    // torchrun / srun: one process per (device, replica). Without WORLD_SIZE (or a world of one)
    // every device runs in this process: threads on the CPU, or streams on one GPU.
    auto launch = mario::exec::readLaunchEnv([](const char* name) { return std::getenv(name); });
    if (!launch) return usage(launch.error().message);
    const bool distributed = launch->has_value() && (*launch)->world_size > 1;
    if (*backend == mario::exec::Backend::Cuda && !distributed)
        options.device = "cuda:" + std::to_string(launch->has_value() ? (*launch)->local_rank : 0);
    if (options.partition_sms && *backend != mario::exec::Backend::Cuda)
        return usage("--partition-sms needs --backend cuda (it cuts one GPU's SMs among the pipeline devices)");
    // Only the in-process runner holds every stage's gradients and the whole batch.
    if (!options.dump_step_dir.empty() && distributed)
        return usage("--dump-step runs every device in one process (got WORLD_SIZE=" +
                     std::to_string((*launch)->world_size) + ")");
    if (options.partition_sms && distributed)
        return usage("--partition-sms is for one process on one GPU; under WORLD_SIZE=" +
                     std::to_string((*launch)->world_size) + " every rank has a GPU of its own");
    // Only a fallback says anything on stderr before the summary: the window shows stderr's first
    // line when a run fails, and this line says why the run is not partitioned.
    options.on_notice = [](const std::string& line) { std::cerr << "mario-executor: note: " << line << std::endl; };

    mario::Plan loaded;
    if (int code = loadPlan(planPath, loaded); code != mario::kOk) return code;
    const mario::Plan* plan = &loaded;
    // WORLD_SIZE against the plan, threads, memory, tokens: bad input found before anything of
    // the run exists (RunRefusals.h); each was a failed run (exit 5) from inside it.
    if (auto refused = mario::exec::refuseRun(*plan, options, *backend, *launch)) {
        std::cerr << "mario-executor: " << *refused << std::endl;
        return mario::kBadInput;
    }
    // A folder that cannot be made is bad input found now, not a failed run after the step. One
    // this run made goes again if the run writes nothing into it.
    std::error_code made;
    const bool newDumpDir = !options.dump_step_dir.empty() && !std::filesystem::exists(options.dump_step_dir, made);
    if (!options.dump_step_dir.empty() && (std::filesystem::create_directories(options.dump_step_dir, made), made))
        return usage("--dump-step: cannot create " + options.dump_step_dir + ": " + made.message());
    const auto dropDumpDir = [&] {
        if (newDumpDir) std::filesystem::remove(options.dump_step_dir, made);  // only if still empty
    };
    if (events) {
        mario::LiveHello hello;
        hello.backend = mario::exec::backendName(*backend);
        hello.model = mario::exec::describe(options.model);
        hello.devices = static_cast<int>(plan->devices.size());
        hello.instructions = plan->instructionCount();
        std::cout << mario::writeLiveEvent(hello) << std::endl;
        options.on_event = [](const std::string& line) { std::cout << line << '\n'; };
    }
    auto report = distributed ? mario::exec::runDistributed(*plan, options, **launch, *backend)
                              : mario::exec::runPlan(*plan, options);
    if (!report) {
        dropDumpDir();
        std::cerr << "mario-executor: " << report.error().message << std::endl;
        return mario::kRunFailed;
    }
    // The run worked and its output could not be written: bad output, as in `mario` (exit 2).
    if (!report->output_error.empty()) {
        dropDumpDir();
        std::cerr << "mario-executor: " << report->output_error << std::endl;
        return mario::kBadInput;
    }
    if (report->rank != 0) return mario::kOk;  // rank 0 prints the run's summary
    mario::LiveSummary summary;
    summary.loss = report->loss;
    summary.instructions = report->instructions;
    summary.devices = report->devices;
    summary.data_parallel = report->data_parallel;
    summary.world = report->world;
    summary.step_ms = report->step_ms;
    summary.peak_allocated_bytes = report->peak_allocated_bytes;
    if (report->reference_loss)
        summary.reference = mario::LiveReferenceCheck{*report->reference_loss, report->max_grad_rel_diff,
                                                      report->max_grad_abs_diff, report->grads_match};
    std::cout << mario::writeLiveEvent(summary) << std::endl;
    return mario::kOk;
}

}  // namespace

// The last resort: whatever escapes a command (an allocation failure, a LibTorch error outside a
// worker) ends in one line and the bad-input code, never in an abort's core dump.
int main(int argc, char** argv) {
    try {
        if (argc >= 2 && std::string(argv[1]) == "profile") return profileMain(argc, argv);
        if (argc >= 2 && std::string(argv[1]) == "calibrate") return mario::exec::calibrateMain(argc, argv);
        if (argc >= 2 && (std::string(argv[1]) == "capabilities" || std::string(argv[1]) == "--capabilities")) {
            if (argc > 2) {
                std::cerr << "mario-executor capabilities: takes no options (got " << argv[2] << ")" << std::endl;
                return mario::kBadInput;
            }
            std::cout << mario::writeExecutorCapabilities(mario::exec::probeCapabilities()) << std::endl;
            return mario::kOk;
        }
        return runMain(argc, argv);
    } catch (const std::exception& e) {
        // One line even where the message has more: LibTorch's errors carry their C++ backtrace.
        const std::string what = e.what();
        std::cerr << "mario-executor: internal error: " << what.substr(0, what.find('\n')) << std::endl;
    } catch (...) {
        std::cerr << "mario-executor: internal error (an unknown exception)" << std::endl;
    }
    return mario::kBadInput;
}
