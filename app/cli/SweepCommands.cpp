// `mario sweep CONFIG --vary KEY=VALUES [--vary …] [--schemes LIST] [--passes LIST[;LIST…]]
//                     [--threads K] [--json | --csv OUT] [--plot OUT.svg] [--metric M]`
// `mario capacity CONFIG --grow KEY[=MIN:MAX[:STEP]] [--schemes LIST] [--passes LIST[;LIST…]]
//                        [--scan] [--threads K] [--json]`
// Thin: core/sweep owns the points, the search, the rows and the chart (docs/sweeps.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "app/cli/Arguments.h"
#include "app/cli/Commands.h"
#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/io/TextFile.h"
#include "core/model/Limits.h"
#include "core/sweep/Capacity.h"
#include "core/sweep/Sweep.h"
#include "core/sweep/SweepChart.h"
#include "core/sweep/SweepExport.h"
#include "core/util/HumanBytes.h"

namespace mario::cli {
namespace {

// What both commands share: the base config, the schemes, the pass sets and the threads.
struct Common {
    Config base;
    std::vector<SchemeChoice> schemes;
    std::vector<std::vector<PassId>> pass_sets;
    int threads = 0;

    // Into a SweepSpec or a CapacitySpec, which name these fields alike.
    template <class Spec>
    void into(Spec& spec) const {
        spec.base = base;
        spec.schemes = schemes;
        spec.pass_sets = pass_sets;
        spec.threads = threads;
    }
};

// Parses a command's arguments (its own options and the common ones: --schemes, --passes,
// --threads, --plot, --json) and reads CONFIG and the common options.
std::optional<CliError> readCommon(const Args& args, std::set<std::string> withValue, std::set<std::string> flags,
                                   const std::string& command, const std::string& executable, Arguments& parsed,
                                   Common& out) {
    withValue.insert({"schemes", "passes", "threads", "plot"});
    flags.insert("json");
    if (auto error = Arguments::parse(args, withValue, flags, parsed)) return error;
    if (parsed.positional().size() != 1) return CliError{kBadInput, command + " needs exactly one CONFIG"};
    auto presets = PresetLibrary::locate(executable);
    const PresetLibrary library = presets ? *presets : PresetLibrary(std::string{});
    auto config = readConfigFile(parsed.positional()[0], library);
    if (!config) return CliError{kBadInput, config.error().message};
    out.base = std::move(*config);
    if (auto text = parsed.value("schemes")) {
        auto schemes = parseSchemeChoices(*text);
        if (!schemes) return CliError{kBadInput, "--schemes: " + schemes.error().message};
        out.schemes = std::move(*schemes);
    }
    if (auto text = parsed.value("passes")) {
        auto sets = parsePassSets(*text);
        if (!sets) return CliError{kBadInput, "--passes: " + sets.error().message};
        out.pass_sets = std::move(*sets);
    }
    if (auto error = parsed.integerIn("threads", 0, limits::kMaxThreads, out.threads)) return error;
    if (auto plot = parsed.value("plot"); plot && !plot->ends_with(".svg"))
        return CliError{kBadInput, "--plot " + *plot +
                                       ": mario writes SVG only (a PNG needs a rasteriser, which the Qt-free CLI lacks; "
                                       "the window's What-if view exports PNG)"};
    return std::nullopt;
}

std::string cell(double value, const char* format) {
    char text[48];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

// The step, throughput, MFU and peak columns of a point that ran.
std::string measures(const SweepPoint& point) {
    const bool unit = point.unit_costs;
    std::string row = cell(point.step_ms, "%10.4g ") + (unit ? std::string(11, '-') + " " : cell(point.samples_per_s, "%11.4g ")) +
                      (point.mfu > 0 ? cell(100 * point.mfu, "%5.1f%% ") : "     - ") +
                      cell(point.peak_bytes / 1e9, "%8.2f ") + cell(point.fullest_device, "d%-3.0f ");
    row += !point.fits ? "   -" : *point.fits ? " yes" : "  NO";
    return row;
}

void printSweepTable(const SweepResult& result) {
    std::string header;
    for (const KnobRange& range : result.spec.knobs) {
        char column[64];
        std::snprintf(column, sizeof column, "%14s ", std::string(range.knob->key.substr(range.knob->key.rfind('.') + 1)).c_str());
        header += column;
    }
    std::printf("%s%-16s %-22s %10s %11s %6s %8s %4s %4s\n", header.c_str(), "scheme", "passes", "step ms", "samples/s",
                "MFU", "peak GB", "dev", "fits");
    int refused = 0;
    for (const SweepPoint& point : result.points) {
        std::string row;
        char text[96];
        for (const KnobValue& value : point.values) {
            std::snprintf(text, sizeof text, "%14s ", value.text().c_str());
            row += text;
        }
        std::snprintf(text, sizeof text, "%-16s %-22s ", point.scheme.label().c_str(),
                      passSetLabel(point.ok() ? point.passes
                                   : result.spec.pass_sets.empty() ? point.passes
                                                                   : result.spec.pass_sets[point.pass_set])
                          .c_str());
        row += text;
        if (point.ok()) row += measures(point);
        else {
            row += "refused: " + point.refusal;
            ++refused;
        }
        std::printf("%s\n", row.c_str());
    }
    std::printf("\n%zu points (%d refused) in %.2f s on %d threads%s\n", result.points.size(), refused,
                result.elapsed_ms / 1000, result.threads, result.cancelled ? ", cancelled" : "");
}

// Capacity's chart: the peak memory of every scheme × pass set on up to 16 evenly spaced grid
// values up to twice the largest answer (and at each answer and first miss), the limit as a
// line, each answer marked. A sweep of those values draws it.
std::optional<CliError> writeCapacityChart(const CapacityResult& capacity, const std::string& path) {
    const CapacitySpec& spec = capacity.spec;
    std::vector<double> values;
    double top = spec.min * 16;
    for (const CapacityAnswer& answer : capacity.answers) {
        if (answer.largest) top = std::max(top, 2 * *answer.largest);
        if (answer.largest) values.push_back(*answer.largest);
        if (answer.first_over) values.push_back(answer.first_over->values[0].number);
    }
    const int last = static_cast<int>(std::floor((std::min(top, spec.max) - spec.min) / spec.step + 1e-9));
    for (int k = 0; k <= 15; ++k) values.push_back(spec.min + std::round(last * k / 15.0) * spec.step);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    SweepSpec sweep;
    sweep.base = spec.base;
    sweep.knobs = {KnobRange{spec.knob, {}}};
    for (double value : values) sweep.knobs[0].values.push_back({value, {}});
    sweep.schemes = spec.schemes;
    sweep.pass_sets = spec.pass_sets;
    sweep.threads = spec.threads;
    auto result = runSweep(sweep);
    if (!result) return CliError{kBadInput, result.error().message};
    SvgLineChart chart = sweepChart(*result, SweepMetric::Peak, &capacity);
    chart.title = "largest " + std::string(spec.knob->key) + " that fits (ringed), by its peak memory";
    if (chart.limit) chart.y_max = 2.5 * *chart.limit;  // the crossing, not the far end, is the point
    if (auto written = writeTextFile(path, renderSvgLineChart(chart), "the capacity chart"); !written)
        return CliError{kBadInput, written.error().message};
    return std::nullopt;
}

// "3.21B" parameters, "-" when not known.
std::string billions(double parameters) {
    return parameters > 0 ? cell(parameters / 1e9, "%.3gB") : "-";
}

}  // namespace

int sweepCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    Common common;
    if (auto error = readCommon(args, {"vary", "csv", "metric"}, {}, "sweep", executable, parsed, common))
        return fail(error->code, error->message);
    SweepSpec spec;
    common.into(spec);
    for (const std::string& vary : parsed.values("vary")) {
        auto range = parseVary(vary);
        if (!range) return fail(kBadInput, "--vary: " + range.error().message);
        spec.knobs.push_back(std::move(*range));
    }
    if (parsed.has("json") && parsed.has("csv")) return fail(kBadInput, "--json and --csv: choose one");
    SweepMetric metric = SweepMetric::Throughput;
    if (auto text = parsed.value("metric")) {
        auto read = parseSweepMetric(*text);
        if (!read) return fail(kBadInput, "--metric: " + read.error().message);
        metric = *read;
    }
    const auto plot = parsed.value("plot");
    if (auto count = checkSweepSpec(spec); !count) return fail(kBadInput, count.error().message);

    auto result = runSweep(spec);
    if (!result) return fail(kBadInput, result.error().message);
    if (auto csv = parsed.value("csv"))
        if (auto written = writeTextFile(*csv, sweepCsv(*result), "the sweep CSV"); !written)
            return fail(kBadInput, written.error().message);
    if (plot)
        if (auto written = writeTextFile(*plot, renderSvgLineChart(sweepChart(*result, metric)), "the sweep chart");
            !written)
            return fail(kBadInput, written.error().message);
    if (parsed.has("json")) std::cout << sweepJson(*result).dump(2) << "\n";
    else printSweepTable(*result);
    for (const SweepPoint& point : result->points)
        if (point.ok()) return kOk;
    return fail(kBadInput, "every point was refused; the first: " + result->points.front().refusal);
}

int capacityCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    Common common;
    if (auto error = readCommon(args, {"grow"}, {"scan"}, "capacity", executable, parsed, common))
        return fail(error->code, error->message);
    CapacitySpec spec;
    common.into(spec);
    spec.check = parsed.has("scan") ? CapacitySpec::Monotonicity::Scan : CapacitySpec::Monotonicity::Spot;
    const auto grow = parsed.value("grow");
    if (!grow) return fail(kBadInput, "capacity needs --grow KEY (one of " + knobKeyList(true) + ")");
    if (auto ok = parseGrow(*grow, spec); !ok) return fail(kBadInput, "--grow: " + ok.error().message);

    const auto plot = parsed.value("plot");
    auto result = runCapacity(spec);
    if (!result) return fail(kBadInput, result.error().message);
    const std::string key(spec.knob->key);
    if (plot)
        if (auto error = writeCapacityChart(*result, *plot)) return fail(error->code, error->message);
    if (parsed.has("json")) {
        std::cout << capacityJson(*result).dump(2) << "\n";
    } else {
        std::printf("largest %s in %s:%s:%s that fits, per scheme and pass set (%.2f s)\n", key.c_str(),
                    KnobValue{spec.min, {}}.text().c_str(), KnobValue{spec.max, {}}.text().c_str(),
                    KnobValue{spec.step, {}}.text().c_str(), result->elapsed_ms / 1000);
        std::printf("%-16s %-22s %10s %7s %10s %11s %6s %8s %4s %4s  %s\n", "scheme", "passes", "largest", "params",
                    "step ms", "samples/s", "MFU", "peak GB", "dev", "fits", "the next value");
        for (const CapacityAnswer& answer : result->answers) {
            std::printf("%-16s %-22s ", answer.scheme.label().c_str(), passSetLabel(answer.passes).c_str());
            if (answer.largest && answer.at) {
                std::printf("%10s %7s %s  ", KnobValue{*answer.largest, {}}.text().c_str(),
                            billions(answer.at->parameters).c_str(), measures(*answer.at).c_str());
            } else {
                std::printf("%10s %7s %10s %11s %6s %8s %4s %4s  ", "none", "", "", "", "", "", "", "");
            }
            if (answer.reached_max) std::printf("(the grid's end fits)");
            else if (!answer.refused_above.empty())
                std::printf("every larger value is refused: %s", answer.refused_above.c_str());
            else if (answer.first_over && answer.first_over->ok())
                std::printf("%s needs %s on device %d, over %s", answer.first_over->values[0].text().c_str(),
                            humanBytes(answer.first_over->peak_bytes).c_str(), answer.first_over->fullest_device,
                            humanBytes(answer.first_over->budget_bytes.value_or(0)).c_str());
            else if (answer.first_over)
                std::printf("%s refused: %s", answer.first_over->values[0].text().c_str(),
                            answer.first_over->refusal.c_str());
            std::printf("\n");
            for (const std::string& violation : answer.violations) std::printf("    NOT MONOTONE: %s\n", violation.c_str());
        }
        std::printf("monotonicity: %s check of the values below each answer and above the first miss\n",
                    spec.check == CapacitySpec::Monotonicity::Scan ? "a full" : "a spot");
    }
    for (const CapacityAnswer& answer : result->answers)
        if (answer.largest) return kOk;
    const CapacityAnswer& first = result->answers.front();
    return fail(kNothingFits, "nothing fits: " + key + " " + KnobValue{spec.min, {}}.text() + " with " +
                                  first.scheme.label() + " " +
                                  (first.first_over && first.first_over->ok()
                                       ? "needs " + humanBytes(first.first_over->peak_bytes) + " on device " +
                                             std::to_string(first.first_over->fullest_device)
                                       : "is refused: " + (first.first_over ? first.first_over->refusal : "")));
}

}  // namespace mario::cli
