#include "executor/CalibrationCli.h"

#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/JsonFile.h"
#include "core/io/PresetLibrary.h"
#include "core/io/TextFile.h"
#include "core/util/ExitCode.h"
#include "executor/CalibrationCheck.h"
#include "executor/CalibrationRefit.h"
#include "executor/Calibrator.h"
#include "executor/OptionValues.h"

namespace mario::exec {

namespace {

constexpr const char* kCalibrateUsage =
    "usage: mario-executor calibrate [--device cpu|cuda[:N]] [--dtype T] [--model SPEC] [--micro-batch-size B] "
    "[--quick] [--repeats R] [--name NAME] [--links-from PRESET] [--check] [--check-against PRESET[,PRESET…]] "
    "-o PRESET.json\n"
    "       mario-executor calibrate --refit CALIBRATED.json [--model SPEC] [--check-against PRESET[,PRESET…]] "
    "-o PRESET.json";

int refuse(const std::string& why) {
    std::cerr << "mario-executor calibrate: " << why << std::endl;
    return kBadInput;
}

// A preset is written only once it reads back as a config would read it.
std::optional<std::string> writePreset(const std::string& out, const nlohmann::json& preset) {
    if (auto back = PresetLibrary::parseHardware(preset, ""); !back)
        return "the fitted preset does not read back: " + back.error().message;
    if (auto written = writeTextFile(out, preset.dump(2) + "\n", "the hardware preset"); !written)
        return written.error().message;
    return std::nullopt;
}

// The one JSON line on stdout: the fitted fields and how far the model is from the measurements.
nlohmann::json summaryOf(const std::string& out, const HardwareConfig& h, const FitSpread& gemm,
                         const FitSpread& stream) {
    return {{"preset", out},
            {"name", h.name},
            {"peak_tflops", h.peak_tflops},
            {"gemm_efficiency", h.gemm_efficiency},
            {"gemm_input_grad_efficiency", h.gemm_input_grad_efficiency},
            {"gemm_weight_grad_efficiency", h.gemm_weight_grad_efficiency},
            {"hbm_gb_per_s", h.hbm_gb_per_s},
            {"hbm_efficiency", h.hbm_efficiency},
            {"elementwise_gb_per_s", h.elementwise_gb_per_s},
            {"kernel_overhead_us", h.kernel_overhead_us},
            {"gemm_model_over_measured", {gemm.low, gemm.high}},
            {"elementwise_model_over_measured", {stream.low, stream.high}}};
}

// A block check's lines on stderr and its entry in the summary.
void report(const BlockCheck& check, nlohmann::json& summary) {
    for (const std::string& line : check.lines()) std::cerr << "check: " << line << "\n";
    summary["check"] = check.toJson();
}

// --refit: the fits again from a calibrated preset's recorded measurements (CalibrationRefit.h).
int refitMain(const std::string& from, const CalibrationOptions& options, const std::vector<HardwareConfig>& against,
              const std::string& out) {
    // The one bounded reader of JSON files (sizes, special files: core/io/JsonFile.h).
    auto preset = readJsonFile(from);
    if (!preset) return refuse("--refit: " + preset.error().message);
    auto refitted = refitPreset(*preset, options.model, against, options.command_line);
    if (!refitted) return refuse("--refit: " + from + ": " + refitted.error().message);
    if (auto failed = writePreset(out, refitted->preset)) return refuse(*failed);
    nlohmann::json summary = summaryOf(out, refitted->fits.hardware, refitted->fits.gemm, refitted->fits.stream);
    summary["refitted_from"] = from;
    if (refitted->check) report(*refitted->check, summary);
    std::cout << summary.dump() << std::endl;
    return kOk;
}

}  // namespace

int calibrateMain(int argc, char** argv) {
    CalibrationOptions options;
    std::string out, linksFrom, checkAgainst, refit;
    bool check = false;
    options.command_line = commandLineOf(argc, argv);
    try {
        for (int i = 2; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&] { return nextValue(argc, argv, i); };
            auto checked = [](auto parsed) {
                if (!parsed) throw std::invalid_argument(parsed.error().message);
                return *parsed;
            };
            if (arg == "--help" || arg == "-h") {
                std::cout << kCalibrateUsage << "\n";
                return kOk;
            } else if (arg == "--device") options.device = value();
            else if (arg == "--dtype") options.dtype = value();
            else if (arg == "--model") options.model = checked(parseModelSpec(value()));
            else if (arg == "--micro-batch-size")
                options.micro_batch_size = checked(integerOption(arg, value(), 1, 65536));
            else if (arg == "--quick") options.quick = true;
            else if (arg == "--repeats") options.repeats = checked(integerOption(arg, value(), 1, 1000));
            else if (arg == "--name") options.name = value();
            else if (arg == "--links-from") linksFrom = value();
            else if (arg == "--check") check = true;
            else if (arg == "--check-against") {
                checkAgainst = value();
                check = true;
            } else if (arg == "--refit") refit = value();
            else if (arg == "-o" || arg == "--output") out = value();
            else return refuse("unknown option " + arg + " (" + kCalibrateUsage + ")");
        }
    } catch (const std::exception& e) {
        return refuse(e.what());
    }
    if (out.empty()) return refuse("-o PRESET.json is required");
    if (!options.dtype.empty())
        if (auto dtype = dtypeOption(options.dtype, options.device.rfind("cuda", 0) == 0); !dtype)
            return refuse(dtype.error().message);
    // Bundled presets by name, as a config names one (core/io/PresetLibrary.h).
    auto bundled = [&](const std::string& option, const std::string& name) -> Result<HardwareConfig> {
        auto library = PresetLibrary::locate(argc > 0 ? argv[0] : "");
        if (!library) return makeError(option + ": " + library.error().message);
        auto preset = library->hardware(name);
        if (!preset) return makeError(option + ": " + preset.error().message);
        return *preset;
    };
    if (!linksFrom.empty()) {
        auto preset = bundled("--links-from", linksFrom);
        if (!preset) return refuse(preset.error().message);
        options.links_from = *preset;
    }
    std::vector<HardwareConfig> against;
    for (std::size_t at = 0; !checkAgainst.empty() && at != std::string::npos;) {
        const std::size_t comma = checkAgainst.find(',', at);
        const std::string name = checkAgainst.substr(at, comma == std::string::npos ? comma : comma - at);
        at = comma == std::string::npos ? comma : comma + 1;
        auto preset = bundled("--check-against", name);
        if (!preset) return refuse(preset.error().message);
        against.push_back(*preset);
    }
    if (!refit.empty()) return refitMain(refit, options, against, out);
    auto result = calibrateDevice(options);
    if (!result) return refuse(result.error().message);
    if (auto failed = writePreset(out, result->preset)) return refuse(*failed);
    const HardwareConfig& h = result->hardware;
    nlohmann::json summary = summaryOf(out, h, result->gemm_spread, result->stream_spread);
    summary["worst_repeat_spread"] = result->worst_repeat_spread;
    if (check) {
        // The preset is written already: a failed check loses no calibration.
        BlockCheckOptions block;
        block.model = options.model.value_or(defaultCalibrationModel(options.device));
        block.micro_batch_size = options.micro_batch_size;
        block.device = options.device;
        block.dtype = result->dtype;
        block.repeats = options.quick ? 5 : 9;
        against.insert(against.begin(), h);
        auto checked = checkBlock(block, against);
        if (!checked) return refuse("--check: " + checked.error().message);
        report(*checked, summary);
        // Kept with the measurements, so that --refit checks a refitted preset against it too.
        result->preset["source"]["check"] = summary["check"];
        if (auto failed = writePreset(out, result->preset)) return refuse(*failed);
    }
    std::cout << summary.dump() << std::endl;
    return kOk;
}

}  // namespace mario::exec
