#pragma once
// Runs the real mario-executor binary and returns what it printed (stdout and stderr), for the
// tests of its exit codes and one-line errors.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace mario::test {

// `prefix` goes before the binary in the shell's command line: variables ("WORLD_SIZE=3 ") or
// commands that set up its process ("ulimit -f 1; trap '' XFSZ; ").
inline std::string runExecutorCliAfter(const std::string& prefix, const std::string& args, int& exitCode) {
    const std::string command = prefix + std::string(MARIO_EXECUTOR_BINARY) + " " + args + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    std::array<char, 256> buffer{};
    while (pipe && fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
    const int status = pipe ? pclose(pipe) : -1;
    exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

inline std::string runExecutorCli(const std::string& args, int& exitCode) {
    return runExecutorCliAfter("", args, exitCode);
}

}  // namespace mario::test
