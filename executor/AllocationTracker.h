#pragma once
// c10's allocator reports, seen from one thread. LibTorch's allocators (the CPU's
// DefaultCPUAllocator and CUDA's caching allocator) report every allocation (+bytes) and free
// (−bytes) to the MemoryReportingInfoBase installed as the calling thread's PROFILER_STATE
// debug info; autograd carries that info into its own threads, so a backward's allocations are
// reported as the thread that started it. This is the one reading that tells apart pipeline
// devices that share an allocator (DeviceMemoryBook.h) and the profiler's activation bytes.
//
// The hook's signature is c10-internal and changed between releases: LibTorch 1.13 declares
// reportMemoryUsage(void*, int64_t, int64_t, int64_t, Device), PyTorch 2.x
// reportMemoryUsage(void*, int64_t, size_t, size_t, Device). ReportingHook takes the parameter
// list from whatever the installed header declares, so one source overrides it in both (and
// in any release whose list still starts with the address and the size and ends with the device).
#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <utility>

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include "executor/DeviceMemoryBook.h"

namespace mario::exec {

// Receives (address, signed bytes, device) for every report of the threads it is installed on.
using AllocationReport = std::function<void(void* ptr, std::int64_t bytes, c10::Device device)>;

template <class Signature>
class ReportingHook;

template <class Base, class... Args>
class ReportingHook<void (Base::*)(Args...)> : public Base {
public:
    explicit ReportingHook(AllocationReport report) : report_(std::move(report)) {}

    void reportMemoryUsage(Args... args) override {
        static_assert(sizeof...(Args) >= 3, "reportMemoryUsage(ptr, size, ..., device) expected");
        const auto all = std::forward_as_tuple(args...);
        report_(std::get<0>(all), static_cast<std::int64_t>(std::get<1>(all)), std::get<sizeof...(Args) - 1>(all));
    }
    bool memoryProfilingEnabled() const override { return true; }

private:
    AllocationReport report_;
};

using AllocationTracker = ReportingHook<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>;

// Installs a tracker as this thread's PROFILER_STATE for its lifetime (and the previous one
// back after), so the allocator reports this thread's allocations to `report`.
class TrackAllocations {
public:
    explicit TrackAllocations(AllocationReport report)
        : guard_(c10::DebugInfoKind::PROFILER_STATE, std::make_shared<AllocationTracker>(std::move(report))) {}

private:
    c10::DebugInfoGuard guard_;
};

// Charges the reports of `type` memory (the run's device; a CUDA run's host copies are not the
// device's) to `account` of `book`; frees end whatever charge their address carries.
inline AllocationReport chargeTo(std::shared_ptr<DeviceMemoryBook> book, int account, c10::DeviceType type) {
    return [book = std::move(book), account, type](void* ptr, std::int64_t bytes, c10::Device device) {
        if (device.type() != type) return;
        if (bytes > 0) book->allocated(ptr, bytes, account);
        else if (bytes < 0) book->freed(ptr);
    };
}

}  // namespace mario::exec
