#include "executor/CommGroups.h"

#include <cstdlib>
#include <stdexcept>

#ifdef MARIO_GLOO_HEADERS
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif

namespace mario::exec {
namespace {

std::chrono::milliseconds millis(double seconds) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

}  // namespace

#ifdef MARIO_GLOO_HEADERS
CommGroupPtr makeGlooGroup(const StorePtr& store, int rank, int size, double timeout_s) {
    auto options = c10d::ProcessGroupGloo::Options::create(millis(timeout_s));
    // torch.distributed reads the same variable; its first interface is the one used here.
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    if (ifname != nullptr && *ifname != '\0') {
        const std::string first = std::string(ifname).substr(0, std::string(ifname).find(','));
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(first));
    } else {
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}
#else
CommGroupPtr makeGlooGroup(const StorePtr&, int, int, double) {
    throw std::runtime_error("this mario-executor was built without Gloo's headers (apt-get install libgloo-dev and "
                             "rebuild), so its CPU processes cannot talk; --backend cuda runs over NCCL");
}
#endif

#ifndef MARIO_C10D_NCCL
namespace {
[[noreturn]] void noNccl() {
    throw std::runtime_error("this LibTorch has no CUDA support (Debian's libtorch is CPU-only); build "
                             "mario-executor against a CUDA PyTorch's LibTorch (docs/gpu.md)");
}
}  // namespace

bool ncclGroupsBuilt() { return false; }
CommGroupPtr makeNcclGroup(const StorePtr&, int, int, double) { noNccl(); }
std::string gpuIdentity(int) { noNccl(); }
void synchronizeGpu(int) { noNccl(); }
void abortNcclGroup(const CommGroupPtr&) {}
#endif

}  // namespace mario::exec
