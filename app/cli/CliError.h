#pragma once
// How a command fails: one line for stderr and the exit code the issue promises
// (2: bad input, 3: the plan deadlocks, 4: the tuner found nothing that fits).
#include <string>

namespace mario::cli {

enum ExitCode { kOk = 0, kBadInput = 2, kDeadlock = 3, kNothingFits = 4 };

struct CliError {
    int code = kBadInput;
    std::string message;
};

}  // namespace mario::cli
