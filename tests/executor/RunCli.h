#pragma once
// Runs the real mario-executor binary and returns what it printed (stdout and stderr), for the
// tests of its exit codes and one-line errors.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace mario::test {

inline std::string runExecutorCli(const std::string& args, int& exitCode) {
    const std::string command = std::string(MARIO_EXECUTOR_BINARY) + " " + args + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    std::array<char, 256> buffer{};
    while (pipe && fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
    const int status = pipe ? pclose(pipe) : -1;
    exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

}  // namespace mario::test
