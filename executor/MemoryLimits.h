#pragma once
// How much memory a run may take, read before it starts (RunMemoryEstimate.h compares its
// estimate with these). Torch-free header: the host's limit is read from Linux's /proc and
// cgroup files; the GPU's from CUDA, in DeviceMemory.cpp, the one file compiled against the
// CUDA headers of both LibTorch builds (executor/CMakeLists.txt's CUDA branch).
#include <filesystem>
#include <string>

#include "core/util/Result.h"

namespace mario::exec {

struct MemoryLimit {
    double bytes = 0;
    // What the number is, as the refusal reads after it: "this machine has available",
    // "this process's memory cgroup allows", "free on GPU 0".
    std::string what;
};

// The host memory a new allocation can get: /proc/meminfo's MemAvailable (free memory plus the
// page cache and slabs the kernel can reclaim), or the memory limit of this process's cgroup
// (v2 memory.max, v1 memory.limit_in_bytes, the tightest of its ancestors) where that is lower:
// past it the kernel kills the process however much the machine has. What others in the cgroup
// already use is not subtracted (their usage counts page cache that would be reclaimed). `root`
// stands for "/" (tests give a folder of fake files). An error says why neither can be read
// (not Linux, /proc not mounted).
Result<MemoryLimit> hostMemoryLimit(const std::filesystem::path& root = "/");

// The free memory of GPU `index` (cudaMemGetInfo: what other processes and this one's CUDA
// context leave). An error where this LibTorch has no CUDA or the GPU cannot be asked.
Result<MemoryLimit> gpuMemoryLimit(int index);

}  // namespace mario::exec
