#pragma once
// How a command fails: one line for stderr and an exit code from the project's one table
// (util/ExitCode.h: 2 bad input, 3 deadlock, 4 the tuner found nothing that fits).
#include <string>

#include "core/util/ExitCode.h"

namespace mario::cli {

// Commands say kBadInput etc. unqualified, as they did when the table lived here.
using mario::kBadInput;
using mario::kDeadlock;
using mario::kNothingFits;
using mario::kOk;

struct CliError {
    int code = kBadInput;
    std::string message;
};

}  // namespace mario::cli
