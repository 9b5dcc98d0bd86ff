// AllocationTracker (executor/AllocationTracker.h) on LibTorch's CPU allocator: the reports it
// receives are the very byte counts of the tensors a thread makes and frees, and charged to a
// DeviceMemoryBook they give each "device" thread its own account, frees on other threads
// included. Expected values are numel × element size, computed here.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include <torch/torch.h>

#include "executor/AllocationTracker.h"
#include "executor/DeviceMemoryBook.h"

namespace {

using mario::exec::DeviceMemoryBook;
using mario::exec::TrackAllocations;

TEST(AllocationTracker, SeesEveryAllocationAndFreeOfItsThread) {
    std::int64_t live = 0, most = 0;
    {
        TrackAllocations tracking([&](void*, std::int64_t bytes, c10::Device device) {
            if (!device.is_cpu()) return;
            live += bytes;
            most = std::max(most, live);
        });
        auto a = torch::empty({1000}, torch::kFloat64);  // 8000 bytes
        auto b = torch::empty({250}, torch::kFloat32);   // 1000 bytes
        EXPECT_EQ(live, 9000);
        a = torch::Tensor();
        EXPECT_EQ(live, 1000);
    }
    EXPECT_EQ(most, 9000);
    EXPECT_EQ(live, 0);  // b was freed while the tracker was still installed
}

TEST(AllocationTracker, ReportsStopWhenTheGuardEnds) {
    std::int64_t seen = 0;
    {
        TrackAllocations tracking([&](void*, std::int64_t bytes, c10::Device) { seen += bytes; });
    }
    auto after = torch::empty({100}, torch::kFloat64);
    EXPECT_EQ(seen, 0);
}

TEST(AllocationTracker, ChargesEachThreadToItsDeviceAcrossHandOvers) {
    auto book = std::make_shared<DeviceMemoryBook>(2);
    torch::Tensor sent;
    // Device 0 makes an activation (4000 bytes) and a scratch tensor it frees itself (800).
    std::thread zero([&] {
        TrackAllocations tracking(mario::exec::chargeTo(book, 0, c10::DeviceType::CPU));
        sent = torch::ones({500}, torch::kFloat64);
        auto scratch = torch::ones({100}, torch::kFloat64);
    });
    zero.join();
    EXPECT_EQ(book->current(0), 4000);
    EXPECT_EQ(book->peak(0), 4800);
    // Device 1 receives it, makes its own output (2000 bytes) and frees what it received.
    std::thread one([&] {
        TrackAllocations tracking(mario::exec::chargeTo(book, 1, c10::DeviceType::CPU));
        auto out = torch::ones({250}, torch::kFloat64);
        sent = torch::Tensor();
        EXPECT_EQ(book->current(0), 0);  // the activation's charge ends on device 0's account
        EXPECT_EQ(book->current(1), 2000);
    });
    one.join();
    EXPECT_EQ(book->current(1), 0);
    EXPECT_EQ(book->peak(1), 2000);
    EXPECT_EQ(book->peak(0), 4800);
}

}  // namespace
