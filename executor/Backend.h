#pragma once
// Where a run computes: LibTorch on the CPU (threads in one process, or TCP between processes)
// or on CUDA GPUs (streams on one GPU, or NCCL between processes). The CLI's --backend is
// parsed once, here; the runners branch on the enum, never on the spelling. Torch-free.
#include <string>
#include <string_view>

#include "core/util/Result.h"

namespace mario::exec {

enum class Backend { Cpu, Cuda };

// "cpu" or "cuda": the --backend spelling, also what the live hello reports.
inline std::string backendName(Backend backend) { return backend == Backend::Cuda ? "cuda" : "cpu"; }

inline Result<Backend> parseBackend(std::string_view name) {
    if (name == "cpu") return Backend::Cpu;
    if (name == "cuda") return Backend::Cuda;
    return makeError("unknown backend \"" + std::string(name) + "\" (cpu or cuda)");
}

}  // namespace mario::exec
