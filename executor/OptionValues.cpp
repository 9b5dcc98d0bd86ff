#include "executor/OptionValues.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "core/util/WholeNumber.h"

namespace mario::exec {

std::string commandLineOf(int argc, char** argv) {
    std::string line;
    for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
    return line;
}

std::string nextValue(int argc, char** argv, int& i) {
    if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
    return argv[++i];
}

namespace {

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

}  // namespace

Result<int> integerOption(const std::string& option, const std::string& text, int min, int max) {
    const auto value = wholeNumberIn(text, min, max);
    if (!value)
        return makeError(option + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                         "] (got " + quoted(text) + ")");
    return static_cast<int>(*value);
}

Result<std::uint64_t> seedOption(const std::string& option, const std::string& text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        return makeError(option + ": expected a whole number in [0, 2^64) (got " + quoted(text) + ")");
    return value;
}

Result<double> numberOption(const std::string& option, const std::string& text, double low, double high) {
    const auto value = decimalNumberIn(text, low, high);
    if (!value) {
        char range[96];
        std::snprintf(range, sizeof range, "a number in (%g, %g]", low, high);
        return makeError(option + ": expected " + range + " (got " + quoted(text) + ")");
    }
    return *value;
}

Result<std::string> dtypeOption(const std::string& text, bool onGpu) {
    if (text == "float64" || text == "float32" || text == "bfloat16") return text;
    if (text == "float16") {
        if (onGpu) return text;
        return makeError("--dtype: float16 needs a GPU (--backend cuda or --device cuda:N); on the CPU use "
                         "bfloat16, float32 or float64");
    }
    return makeError("--dtype: expected float64, float32, bfloat16 or float16 (got " + quoted(text) + ")");
}

Result<bool> dumpStepFits(int iterations, const std::string& dtype) {
    if (iterations != 1)
        return makeError("--dump-step writes one step: it needs --iterations 1 (got " + std::to_string(iterations) +
                         ")");
    if (dtype != "float64")
        return makeError("--dump-step is compared in double precision: it needs --dtype float64 (got " + quoted(dtype) +
                         ")");
    return true;
}

}  // namespace mario::exec
