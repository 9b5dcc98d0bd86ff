#pragma once
// How many threads an in-process run may start, checked before the first one (and before any
// weight): every (device, data-parallel replica) of a run without WORLD_SIZE is a thread of this
// process (Executor.cpp), so `--dp 128` on a 256-device plan asks for 32,768 of them. On a machine
// whose pid_max is 32768 the thread that found no PID left threw std::system_error while the others
// ran, and the process aborted ("terminate called without an active exception") after it had
// built 4.7 GB of weights. Now the run is refused first, in one line with the numbers.
//
// The limit is the smallest of:
// - half of the threads the machine has left: the lowest of pid_max, threads-max and this user's
//   RLIMIT_NPROC, less the threads that exist now (/proc/loadavg). Half, so that a run at its
//   limit still leaves the rest of the machine PIDs to fork a shell or a compiler with;
// - half of this process's memory maps (vm.max_map_count): glibc gives each thread's stack a
//   mapping and a guard page, two maps of the 65,530 a process may hold, and LibTorch's
//   libraries and allocations need the rest;
// - a fixed ceiling of kMaxRunThreads, whatever the machine says: machines that raise pid_max
//   (systemd sets 4,194,304) would otherwise allow a million threads, each with its 8 MiB stack
//   reserved and its own interpreter, on a handful of cores. 16,384 is four times the largest
//   in-process run measured to finish (4,096 devices, docs/limits.md).
// Torch-free: the CLI refuses with it before any LibTorch work; the runner checks it too.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace mario::exec {

inline constexpr std::int64_t kMaxRunThreads = 16384;

// What the machine says about threads; none where a file cannot be read or sets no limit.
struct MachineThreads {
    std::optional<std::int64_t> pid_max;      // /proc/sys/kernel/pid_max
    std::optional<std::int64_t> threads_max;  // /proc/sys/kernel/threads-max
    std::optional<std::int64_t> user_limit;   // RLIMIT_NPROC (threads of this user), if limited
    std::optional<std::int64_t> map_count;    // /proc/sys/vm/max_map_count
    std::optional<std::int64_t> running;      // threads that exist now, /proc/loadavg's 4th field
};

// Reads the files under `root` (tests give a folder of fake files) and RLIMIT_NPROC (only with
// the real root).
MachineThreads readMachineThreads(const std::filesystem::path& root = "/");

struct ThreadLimit {
    std::int64_t threads = kMaxRunThreads;
    // Which bound it is, as the refusal reads after "the limit is N": "half of the 32656 threads
    // this machine has left (pid_max 32768, 112 running)" or "the fixed ceiling".
    std::string why;
};

ThreadLimit threadLimit(const MachineThreads& machine);

// The worker threads a run in this process starts at once: one per device and replica (each
// worker runs LibTorch with one intra-op and one BLAS thread, on its own thread, so nothing
// multiplies it). This thread and LibTorch's own few sit in the headroom the limit leaves.
std::int64_t runThreads(int devices, int replicas);

// The one line that refuses the run (without the program's prefix), or none when it fits: the
// threads needed, the limit and why, and what to lower.
std::optional<std::string> threadRefusal(int devices, int replicas, const ThreadLimit& limit);

}  // namespace mario::exec
