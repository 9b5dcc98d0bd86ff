#pragma once
// Starts one mario-executor process per rank the way torchrun does (RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT in the environment), each writing stdout and stderr to
// its own file, so the multi-process path is tested through the real binary.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace mario::test {

// A port nobody listens on right now (bind to 0, read it back, close).
inline int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t length = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
    ::close(fd);
    return ntohs(addr.sin_port);
}

struct RankRun {
    pid_t pid = -1;
    std::filesystem::path output;  // stdout + stderr
    int exitCode = -1;             // -1 until reaped; 128 + signal when killed
};

class Ranks {
public:
    // Starts WORLD ranks of `MARIO_EXECUTOR_BINARY args`; outputs go to dir/rank<R>.txt.
    Ranks(int world, const std::vector<std::string>& args, const std::filesystem::path& dir)
        : Ranks(world, [&args](int) { return args; }, dir) {}

    // The same with each rank's own arguments (`argsOfRank(rank)`).
    Ranks(int world, const std::function<std::vector<std::string>(int)>& argsOfRank, const std::filesystem::path& dir)
        : runs_(world) {
        const std::string port = std::to_string(freePort());
        std::filesystem::create_directories(dir);
        for (int r = 0; r < world; ++r) {
            runs_[r].output = dir / ("rank" + std::to_string(r) + ".txt");
            // Everything the child needs is built before fork: between fork and exec only
            // async-signal-safe calls are allowed (the test process has threads).
            std::vector<std::string> env;
            for (char** e = environ; *e; ++e) {
                const std::string entry = *e;
                const std::string name = entry.substr(0, entry.find('='));
                if (name != "RANK" && name != "WORLD_SIZE" && name != "LOCAL_RANK" && name != "MASTER_ADDR" &&
                    name != "MASTER_PORT" && name != "TORCHELASTIC_USE_AGENT_STORE" &&
                    name != "TORCHELASTIC_RESTART_COUNT")
                    env.push_back(entry);
            }
            env.push_back("RANK=" + std::to_string(r));
            env.push_back("WORLD_SIZE=" + std::to_string(world));
            env.push_back("LOCAL_RANK=" + std::to_string(r));
            env.push_back("MASTER_ADDR=127.0.0.1");
            env.push_back("MASTER_PORT=" + port);
            std::vector<char*> envp, argv{const_cast<char*>(MARIO_EXECUTOR_BINARY)};
            for (auto& e : env) envp.push_back(e.data());
            envp.push_back(nullptr);
            std::vector<std::string> argsCopy = argsOfRank(r);
            for (auto& a : argsCopy) argv.push_back(a.data());
            argv.push_back(nullptr);
            const std::string output = runs_[r].output.string();
            const pid_t pid = ::fork();
            if (pid == 0) {
                const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0) ::_exit(120);
                ::dup2(fd, 1);
                ::dup2(fd, 2);
                ::execve(MARIO_EXECUTOR_BINARY, argv.data(), envp.data());
                ::_exit(127);
            }
            runs_[r].pid = pid;
        }
    }

    ~Ranks() {
        for (auto& run : runs_)
            if (run.exitCode < 0 && run.pid > 0) ::kill(run.pid, SIGKILL), ::waitpid(run.pid, nullptr, 0);
    }

    // Reaps every rank or kills the rest after `seconds`; true when all ended by themselves.
    bool wait(double seconds) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        for (;;) {
            bool all = true;
            for (auto& run : runs_) {
                if (run.exitCode >= 0) continue;
                int status = 0;
                if (::waitpid(run.pid, &status, WNOHANG) == run.pid)
                    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                else all = false;
            }
            if (all) return true;
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    void kill(int rank) { ::kill(runs_[rank].pid, SIGKILL); }
    // Freezes a rank (SIGSTOP): alive to the kernel, its connections open, but silent.
    void freeze(int rank) { ::kill(runs_[rank].pid, SIGSTOP); }
    const RankRun& operator[](int rank) const { return runs_[rank]; }
    int size() const { return static_cast<int>(runs_.size()); }

    std::string output(int rank) const {
        std::ifstream in(runs_[rank].output);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }

private:
    std::vector<RankRun> runs_;
};

}  // namespace mario::test
