#include "executor/ThreadBudget.h"

#include <sys/resource.h>

#include <algorithm>
#include <sstream>

#include "executor/ProcFiles.h"

namespace mario::exec {
namespace {

namespace fs = std::filesystem;

// The first number of a /proc or /sys file; none when unreadable or not positive.
std::optional<std::int64_t> firstNumber(const fs::path& file) {
    std::istringstream in(readProcText(file).value_or(""));
    std::int64_t value = 0;
    if (!(in >> value) || value <= 0) return std::nullopt;
    return value;
}

// "0.52 0.58 0.59 3/712 12345": the threads that exist now are after the slash.
std::optional<std::int64_t> runningThreads(const fs::path& loadavg) {
    std::istringstream in(readProcText(loadavg).value_or(""));
    std::string field;
    for (int i = 0; i < 4 && in >> field; ++i) {}
    const auto slash = field.find('/');
    if (!in || slash == std::string::npos) return std::nullopt;
    std::istringstream total(field.substr(slash + 1));
    std::int64_t value = 0;
    if (!(total >> value) || value < 0) return std::nullopt;
    return value;
}

std::string str(std::int64_t value) { return std::to_string(value); }

}  // namespace

MachineThreads readMachineThreads(const fs::path& root) {
    MachineThreads machine;
    machine.pid_max = firstNumber(underRoot(root, "/proc/sys/kernel/pid_max"));
    machine.threads_max = firstNumber(underRoot(root, "/proc/sys/kernel/threads-max"));
    machine.map_count = firstNumber(underRoot(root, "/proc/sys/vm/max_map_count"));
    machine.running = runningThreads(underRoot(root, "/proc/loadavg"));
    if (root == "/") {
        rlimit limit{};
        if (getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
            machine.user_limit = static_cast<std::int64_t>(limit.rlim_cur);
    }
    return machine;
}

ThreadLimit threadLimit(const MachineThreads& machine) {
    ThreadLimit limit{kMaxRunThreads, "the executor's fixed ceiling of " + str(kMaxRunThreads) + " threads"};
    // The tightest of the machine-wide counts, and what it is called in the message.
    std::optional<std::int64_t> total;
    std::string name;
    auto tighter = [&](const std::optional<std::int64_t>& value, const std::string& what) {
        if (value && (!total || *value < *total)) total = value, name = what;
    };
    tighter(machine.pid_max, "pid_max");
    tighter(machine.threads_max, "threads-max");
    tighter(machine.user_limit, "ulimit -u");
    if (total) {
        const std::int64_t running = machine.running.value_or(0);
        const std::int64_t left = std::max<std::int64_t>(0, *total - running);
        if (left / 2 < limit.threads)
            limit = {left / 2, "half of the " + str(left) + " threads this machine has left (" + name + " " +
                                   str(*total) + ", " + str(running) + " running)"};
    }
    if (machine.map_count && *machine.map_count / 4 < limit.threads)
        limit = {*machine.map_count / 4, "half of what vm.max_map_count " + str(*machine.map_count) +
                                             " allows (each thread's stack takes two memory maps)"};
    return limit;
}

std::int64_t runThreads(int devices, int replicas) {
    return static_cast<std::int64_t>(std::max(devices, 0)) * std::max(replicas, 0);
}

std::optional<std::string> threadRefusal(int devices, int replicas, const ThreadLimit& limit) {
    const std::int64_t needed = runThreads(devices, replicas);
    if (needed <= limit.threads) return std::nullopt;
    std::string line = "the run needs " + str(needed) + " threads (" + str(devices) + " devices x " + str(replicas) +
                       " replicas, one thread each), more than the limit of " + str(limit.threads) + ", " + limit.why +
                       "; ";
    const std::int64_t fewestDp = devices > 0 ? limit.threads / devices : 0;
    if (fewestDp >= 1) line += "lower --dp to " + str(fewestDp) + " or less, or ";
    else line += "the plan's devices alone are too many for one process: ";
    return line + "run one process per device under torchrun (WORLD_SIZE)";
}

}  // namespace mario::exec
