#pragma once
// Values of mario-executor's options, read whole and in range: "3abc" is not 3, "1e9" is not an
// iteration count, "nan" is not a learning rate. Each refusal is one line naming the option and
// what it accepts (exit 2 in main.cpp), before anything runs.
#include <cstdint>
#include <string>

#include "core/util/Result.h"

namespace mario::exec {

// The command as typed, its words joined by spaces: what a profile or preset records it was made by.
std::string commandLineOf(int argc, char** argv);
// The value after option argv[i], moving i onto it; throws std::invalid_argument "OPTION needs a
// value" at the end of the command (each subcommand's loop turns that into its one line).
std::string nextValue(int argc, char** argv, int& i);

// A decimal integer in [min, max].
Result<int> integerOption(const std::string& option, const std::string& text, int min, int max);
// A random seed: any decimal in [0, 2^64).
Result<std::uint64_t> seedOption(const std::string& option, const std::string& text);
// A finite number in (low, high].
Result<double> numberOption(const std::string& option, const std::string& text, double low, double high);
// One of the dtypes the executor runs; float16 only on a GPU (the CPU has no half-precision GEMM,
// which failed mid-run before).
Result<std::string> dtypeOption(const std::string& text, bool onGpu);
// Whether --dump-step goes with these options: it writes one step (StepDump.h) whose gradients
// another runtime must match to ~1e-9, so one iteration (the weights it dumps are that step's
// initial ones) in float64. The refusal names the option to change.
Result<bool> dumpStepFits(int iterations, const std::string& dtype);

}  // namespace mario::exec
