// `mario plan`, `mario validate`, `mario export`, `mario import`.
#include <filesystem>
#include <iostream>
#include <optional>

#include "app/cli/Arguments.h"
#include "app/cli/Commands.h"
#include "app/cli/PlanLoading.h"
#include "core/io/ChromeTrace.h"
#include "core/io/PipeliningCsv.h"
#include "core/io/PipeliningImport.h"
#include "core/io/PlanJson.h"
#include "core/io/PresetLibrary.h"
#include "core/io/TextFile.h"
#include "core/io/TorchtitanSettings.h"
#include "core/session/InputFile.h"
#include "core/session/PlanBuilder.h"
#include "core/session/RecomputeFreeOrder.h"
#include "core/sim/Validator.h"

namespace mario::cli {

int planCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(args, {"passes", "output"}, {}, parsed, {{"o", "output"}}))
        return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "plan needs exactly one CONFIG");
    const auto output = parsed.value("output");
    if (!output) return fail(kBadInput, "plan needs -o PLAN (where to write the plan)");
    auto prepared = preparePlan(parsed.positional()[0], parsed.value("passes"), executable);
    if (auto* error = std::get_if<CliError>(&prepared)) return fail(error->code, error->message);
    const Plan& plan = std::get<PreparedPlan>(prepared).plan;
    if (auto error = checkPlan(plan, parsed.positional()[0])) return fail(error->code, error->message);
    if (auto written = writePlanFile(plan, *output); !written) return fail(kBadInput, written.error().message);
    std::cout << "wrote " << *output << " (" << plan.devices.size() << " devices, " << plan.instructionCount()
              << " instructions)\n";
    return kOk;
}

int validateCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(args, {}, {}, parsed)) return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "validate needs exactly one PLAN");
    auto prepared = preparePlan(parsed.positional()[0], std::string("none"), executable);
    if (auto* error = std::get_if<CliError>(&prepared)) return fail(error->code, error->message);
    const Plan& plan = std::get<PreparedPlan>(prepared).plan;
    std::cout << parsed.positional()[0] << ": valid (" << plan.devices.size() << " devices, " << plan.stages.size()
              << " stages, " << plan.microbatchCount() << " micro-batches, " << plan.instructionCount()
              << " instructions)\n";
    return kOk;
}

namespace {

// The CSV, and beside a compute-only one the torchtitan settings that run it. With
// drop_recompute the order is the one core/session/RecomputeFreeOrder derives.
int writeCsv(const std::string& path, const PreparedPlan& ready, const std::string& out,
             const PipeliningCsvOptions& options) {
    std::optional<RecomputeFreeOrder> free;
    if (options.drop_recompute) {
        auto order = recomputeFreeOrder(ready.input, ready);
        if (!order) return fail(kBadInput, path + ": " + order.error().message);
        free = std::move(*order);
    }
    const Plan& plan = free ? free->plan : ready.plan;
    auto csv = toPipeliningCsv(plan, options);
    if (!csv) {
        std::string message = path + ": " + csv.error().message;
        // When recomputation alone stands in PyTorch's way, say how to go on without it.
        if (!options.drop_recompute && toPipeliningCsv(plan, {options.format, true}).ok()) {
            auto order = recomputeFreeOrder(ready.input, ready);
            message += order ? ": add --drop-recompute to write the order without them"
                             : "; --drop-recompute would not do: " + order.error().message;
        }
        return fail(kBadInput, message);
    }
    if (auto written = writeTextFile(out, *csv, "the pipelining CSV"); !written)
        return fail(kBadInput, written.error().message);
    std::cout << "wrote " << out;
    if (free) std::cout << " (" << free->summary() << ")";
    std::cout << "\n";
    // torchtitan loads compute-only files; a compute+comms one runs only on PyTorch directly.
    if (options.format != PipeliningCsvFormat::ComputeOnly) {
        std::cout << "note: torchtitan loads compute-only CSVs; no torchtitan settings written\n";
        return kOk;
    }
    auto settings = torchtitanSettings(plan);
    if (!settings) {
        std::cout << "note: no torchtitan settings: " << settings.error().message << "\n";
        return kOk;
    }
    const std::string argsPath = torchtitanArgsPath(out);
    if (auto written = writeTextFile(argsPath, torchtitanArgsFile(*settings, out), "the torchtitan settings"); !written)
        return fail(kBadInput, written.error().message);
    std::cout << "wrote " << argsPath << " (torchtitan: " << settings->schedule << ", " << settings->stages_per_rank
              << (settings->stages_per_rank == 1 ? " stage" : " stages") << " per rank, " << plan.microbatchCount()
              << " micro-batches)\n";
    for (const std::string& note : settings->notes) std::cout << "note: " << note << "\n";
    return kOk;
}

}  // namespace

int exportCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(args, {"chrome-trace", "csv", "passes", "format"}, {"drop-recompute"}, parsed))
        return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "export needs exactly one PLAN (or config)");
    if (parsed.has("chrome-trace") == parsed.has("csv"))
        return fail(kBadInput, "export needs exactly one of --chrome-trace OUT or --csv OUT");
    if (!parsed.has("csv") && (parsed.has("format") || parsed.has("drop-recompute")))
        return fail(kBadInput, "--format and --drop-recompute go with --csv OUT");
    PipeliningCsvOptions csvOptions;
    csvOptions.drop_recompute = parsed.has("drop-recompute");
    if (auto format = parsed.value("format")) {
        auto known = parsePipeliningCsvFormat(*format);
        if (!known) return fail(kBadInput, "--format: " + known.error().message);
        csvOptions.format = *known;
    }
    const std::string& path = parsed.positional()[0];
    // A Chrome trace shows memory over time: simulate with the curves; a CSV needs no timing.
    PrepareOptions options{.simulate = parsed.has("chrome-trace"), .record_memory_curve = true};
    auto prepared = preparePlan(path, parsed.value("passes"), executable, options);
    if (auto* error = std::get_if<CliError>(&prepared)) return fail(error->code, error->message);
    const PreparedPlan& ready = std::get<PreparedPlan>(prepared);
    if (auto out = parsed.value("csv")) return writeCsv(path, ready, *out, csvOptions);
    const std::string out = *parsed.value("chrome-trace");
    if (auto written = writeChromeTrace(ready.plan, ready.result, out); !written)
        return fail(kBadInput, written.error().message);
    std::cout << "wrote " << out << " (open it in Perfetto or chrome://tracing)\n";
    return kOk;
}

// Without --config the plan gets unit costs and the placement the file implies; with one,
// the config's stages and costs, provided its placement is the file's.
int importCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(args, {"config", "output"}, {}, parsed, {{"o", "output"}}))
        return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "import needs exactly one CSV");
    const std::string& path = parsed.positional()[0];
    const auto config = parsed.value("config");
    const auto output = parsed.value("output");
    if (!output) return fail(kBadInput, "import needs -o PLAN");
    auto csv = readPipeliningCsvFile(path);
    if (!csv) return fail(kBadInput, csv.error().message);
    std::optional<Plan> skeleton;  // the config's stages and costs, when one is given
    if (config) {
        auto presets = PresetLibrary::locate(executable);
        auto input = loadInputFile(*config, presets ? *presets : PresetLibrary(std::string{}));
        if (!input) return fail(kBadInput, input.error().message);
        skeleton = std::move(input->plan);
    }
    auto imported = skeleton ? importPipeliningCsv(*csv, std::move(*skeleton), *config)
                             : importPipeliningCsv(*csv, std::filesystem::path(path).stem().string());
    if (!imported) return fail(kBadInput, path + ": " + imported.error().message);
    Plan& plan = imported->plan;
    plan.info.passes_applied.clear();
    if (auto error = checkPlan(plan, path)) return fail(error->code, error->message);
    if (auto written = writePlanFile(plan, *output); !written) return fail(kBadInput, written.error().message);
    std::cout << "wrote " << *output << " (" << plan.devices.size() << " devices, " << plan.stages.size() << " stages, "
              << plan.microbatchCount() << " micro-batches)\n";
    for (const std::string& note : imported->notes) std::cout << "note: " << note << "\n";
    return kOk;
}

}  // namespace mario::cli
