#pragma once
// The `mario` subcommands. Each takes its own arguments (after the subcommand name) and
// returns an exit code, printing results on stdout and one-line errors on stderr.
#include <string>
#include <vector>

namespace mario::cli {

using Args = std::vector<std::string>;

int simulateCommand(const Args& args, const std::string& executable);
int planCommand(const Args& args, const std::string& executable);
int validateCommand(const Args& args, const std::string& executable);
int exportCommand(const Args& args, const std::string& executable);
int importCommand(const Args& args, const std::string& executable);
int tuneCommand(const Args& args, const std::string& executable);
int sweepCommand(const Args& args, const std::string& executable);
int capacityCommand(const Args& args, const std::string& executable);

// Prints "mario: <message>" on stderr and returns the code.
int fail(int code, const std::string& message);

}  // namespace mario::cli
