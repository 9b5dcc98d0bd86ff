#pragma once
// Which pipeline device holds which bytes, when several of them share one allocator: the
// pipeline devices of a single-GPU run share one GPU (and CPU runs share one process), so the
// allocator's own statistics give one number for all of them. Every allocation is charged to
// the device whose worker made it and stays charged to it until freed, whichever thread frees it
// (a tensor sent to the next stage is freed by the receiver's thread). Each device thus has its
// own account — current bytes and a peak — as if it had its own memory pool: the per-device peak
// the simulator predicts (docs/gpu.md#memory).
//
// Torch-free and thread-safe: the allocator's reports (executor/AllocationTracker.h) arrive from
// every worker thread and from autograd's threads. Tested in tests/executor/memory_book_test.cpp.
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace mario::exec {

class DeviceMemoryBook {
public:
    // Accounts 0 .. devices−1.
    explicit DeviceMemoryBook(int devices);

    // `bytes` at `ptr` were allocated by `device`'s worker. A device outside the book (the main
    // thread, −1) is not charged: its frees are still matched, by address. An address the book
    // already holds was freed unseen (by a thread without a tracker) and is now reused, so the
    // old charge ends first.
    void allocated(const void* ptr, std::int64_t bytes, int device);
    // The block at `ptr` was freed: its charge ends, on the device that made it. Unknown
    // addresses (allocated before the book existed) are ignored.
    void freed(const void* ptr);

    int devices() const { return static_cast<int>(current_.size()); }
    double current(int device) const;
    double peak(int device) const;
    std::vector<double> peaks() const;
    // Starts a new peak at every device's current bytes (one step's peak, not the run's).
    void resetPeaks();

private:
    struct Charge {
        std::int64_t bytes = 0;
        int device = 0;
    };

    mutable std::mutex mutex_;
    std::unordered_map<const void*, Charge> charges_;
    std::vector<std::int64_t> current_;
    std::vector<std::int64_t> peak_;
};

}  // namespace mario::exec
