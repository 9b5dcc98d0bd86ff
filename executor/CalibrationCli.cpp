#include "executor/CalibrationCli.h"

#include <iostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/PresetLibrary.h"
#include "core/io/TextFile.h"
#include "core/util/ExitCode.h"
#include "executor/Calibrator.h"
#include "executor/OptionValues.h"

namespace mario::exec {

namespace {

constexpr const char* kCalibrateUsage =
    "usage: mario-executor calibrate [--device cpu|cuda[:N]] [--dtype T] [--model SPEC] [--micro-batch-size B] "
    "[--quick] [--repeats R] [--name NAME] [--links-from PRESET] -o PRESET.json";

int refuse(const std::string& why) {
    std::cerr << "mario-executor calibrate: " << why << std::endl;
    return kBadInput;
}

}  // namespace

int calibrateMain(int argc, char** argv) {
    CalibrationOptions options;
    std::string out, linksFrom;
    for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);
    try {
        for (int i = 2; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
                return argv[++i];
            };
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
    if (!linksFrom.empty()) {
        // A bundled preset by name, as a config names one (core/io/PresetLibrary.h).
        auto library = PresetLibrary::locate(argc > 0 ? argv[0] : "");
        if (!library) return refuse("--links-from: " + library.error().message);
        auto preset = library->hardware(linksFrom);
        if (!preset) return refuse("--links-from: " + preset.error().message);
        options.links_from = *preset;
    }
    auto result = calibrateDevice(options);
    if (!result) return refuse(result.error().message);
    // The preset must read back as a config would read it before it is written.
    if (auto back = PresetLibrary::parseHardware(result->preset, ""); !back)
        return refuse("the fitted preset does not read back: " + back.error().message);
    if (auto written = writeTextFile(out, result->preset.dump(2) + "\n", "the hardware preset"); !written)
        return refuse(written.error().message);
    const HardwareConfig& h = result->hardware;
    std::cout << nlohmann::json{{"preset", out},
                                {"name", h.name},
                                {"peak_tflops", h.peak_tflops},
                                {"gemm_efficiency", h.gemm_efficiency},
                                {"hbm_gb_per_s", h.hbm_gb_per_s},
                                {"hbm_efficiency", h.hbm_efficiency},
                                {"kernel_overhead_us", h.kernel_overhead_us},
                                {"gemm_model_over_measured", {result->gemm_spread.low, result->gemm_spread.high}},
                                {"elementwise_model_over_measured",
                                 {result->stream_spread.low, result->stream_spread.high}},
                                {"worst_repeat_spread", result->worst_repeat_spread}}
                     .dump()
              << std::endl;
    return kOk;
}

}  // namespace mario::exec
