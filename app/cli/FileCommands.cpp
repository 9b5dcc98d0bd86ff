// `mario plan`, `mario validate`, `mario export`, `mario import`.
#include <iostream>

#include "Arguments.h"
#include "Commands.h"
#include "PlanLoading.h"
#include "io/ChromeTrace.h"
#include "io/InputFile.h"
#include "io/PipeliningCsv.h"
#include "io/PlanJson.h"
#include "model/PresetLibrary.h"
#include "schedule/PlanBuilder.h"
#include "sim/Simulator.h"
#include "sim/Validator.h"

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

int exportCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(args, {"chrome-trace", "csv", "passes"}, {}, parsed))
        return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "export needs exactly one PLAN (or config)");
    if (parsed.has("chrome-trace") == parsed.has("csv"))
        return fail(kBadInput, "export needs exactly one of --chrome-trace OUT or --csv OUT");
    auto prepared = preparePlan(parsed.positional()[0], parsed.value("passes"), executable);
    if (auto* error = std::get_if<CliError>(&prepared)) return fail(error->code, error->message);
    const Plan& plan = std::get<PreparedPlan>(prepared).plan;
    if (auto out = parsed.value("csv")) {
        if (auto written = writePipeliningCsv(plan, *out); !written) return fail(kBadInput, written.error().message);
        std::cout << "wrote " << *out << "\n";
        return kOk;
    }
    auto sim = Simulator::run(plan, {.record_memory_curve = true});
    if (!sim) return fail(kBadInput, sim.error().message);
    const std::string out = *parsed.value("chrome-trace");
    if (auto written = writeChromeTrace(plan, *sim, out); !written) return fail(kBadInput, written.error().message);
    std::cout << "wrote " << out << " (open it in Perfetto or chrome://tracing)\n";
    return kOk;
}

int importCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(args, {"config", "output"}, {}, parsed, {{"o", "output"}}))
        return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "import needs exactly one CSV");
    const auto config = parsed.value("config");
    const auto output = parsed.value("output");
    if (!config) return fail(kBadInput, "import needs --config FILE (a config or plan giving stages and costs)");
    if (!output) return fail(kBadInput, "import needs -o PLAN");
    auto presets = PresetLibrary::locate(executable);
    auto input = loadInputFile(*config, presets ? *presets : PresetLibrary(std::string{}));
    if (!input) return fail(kBadInput, input.error().message);
    auto order = readPipeliningCsvFile(parsed.positional()[0]);
    if (!order) return fail(kBadInput, order.error().message);
    // The plan's own gradient synchronisation is added back by planFromComputeOrder.
    for (auto& program : *order)
        std::erase_if(program, [](const Instruction& ins) { return !hasMicrobatch(ins.op); });
    if (order->size() != input->plan.devices.size())
        return fail(kBadInput, parsed.positional()[0] + ": " + std::to_string(order->size()) + " ranks, but " + *config +
                                   " has " + std::to_string(input->plan.devices.size()) + " devices");
    auto plan = planFromComputeOrder(std::move(input->plan), *order);
    if (!plan) return fail(kBadInput, plan.error().message);
    plan->info.passes_applied.clear();
    if (auto error = checkPlan(*plan, parsed.positional()[0])) return fail(error->code, error->message);
    if (auto written = writePlanFile(*plan, *output); !written) return fail(kBadInput, written.error().message);
    std::cout << "wrote " << *output << "\n";
    return kOk;
}

}  // namespace mario::cli
