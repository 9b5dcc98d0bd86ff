// DeviceMemoryBook (executor/DeviceMemoryBook.h): per-device accounts of one shared allocator.
// Expected values are the sums of the byte counts the test itself hands in.
#include <gtest/gtest.h>

#include <array>
#include <thread>
#include <vector>

#include "executor/DeviceMemoryBook.h"

namespace {

using mario::exec::DeviceMemoryBook;

TEST(DeviceMemoryBook, ChargesStayWithTheAllocatingDevice) {
    DeviceMemoryBook book(2);
    std::array<char, 4> blocks{};
    book.allocated(&blocks[0], 100, 0);  // device 0's activation
    book.allocated(&blocks[1], 30, 1);
    book.allocated(&blocks[2], 50, 0);
    EXPECT_EQ(book.current(0), 150);
    EXPECT_EQ(book.current(1), 30);
    // Device 1 frees what device 0 sent it: device 0's account shrinks, not device 1's.
    book.freed(&blocks[0]);
    EXPECT_EQ(book.current(0), 50);
    EXPECT_EQ(book.current(1), 30);
    EXPECT_EQ(book.peak(0), 150);
    EXPECT_EQ(book.peak(1), 30);
    EXPECT_EQ(book.peaks(), (std::vector<double>{150, 30}));
}

TEST(DeviceMemoryBook, PeaksRestartAtTheCurrentBytes) {
    DeviceMemoryBook book(1);
    std::array<char, 3> blocks{};
    book.allocated(&blocks[0], 10, 0);  // weights: held across steps
    book.allocated(&blocks[1], 40, 0);  // step 1's activation
    book.freed(&blocks[1]);
    EXPECT_EQ(book.peak(0), 50);
    book.resetPeaks();
    EXPECT_EQ(book.peak(0), 10);
    book.allocated(&blocks[2], 25, 0);  // step 2's, smaller
    EXPECT_EQ(book.peak(0), 35);
}

TEST(DeviceMemoryBook, UnchargedThreadsAndUnknownAddressesChangeNothing) {
    DeviceMemoryBook book(2);
    std::array<char, 3> blocks{};
    book.allocated(&blocks[0], 64, -1);  // the main thread: not a device
    book.allocated(&blocks[1], 64, 2);   // outside the book
    book.freed(&blocks[2]);              // allocated before the book existed
    book.freed(&blocks[0]);
    EXPECT_EQ(book.current(0), 0);
    EXPECT_EQ(book.current(1), 0);
    EXPECT_EQ(book.peaks(), (std::vector<double>{0, 0}));
}

TEST(DeviceMemoryBook, AReusedAddressEndsItsUnseenOldCharge) {
    DeviceMemoryBook book(2);
    char block = 0;
    book.allocated(&block, 100, 0);
    // Freed by a thread without a tracker, then handed out again, to device 1.
    book.allocated(&block, 40, 1);
    EXPECT_EQ(book.current(0), 0);
    EXPECT_EQ(book.current(1), 40);
    EXPECT_EQ(book.peak(0), 100);
}

TEST(DeviceMemoryBook, ConcurrentDevicesKeepExactAccounts) {
    constexpr int kDevices = 4, kBlocks = 1000;
    DeviceMemoryBook book(kDevices);
    std::vector<std::vector<char>> memory(kDevices, std::vector<char>(kBlocks));
    auto onEveryDevice = [](const auto& body) {
        std::vector<std::thread> threads;
        for (int d = 0; d < kDevices; ++d) threads.emplace_back(body, d);
        for (auto& t : threads) t.join();
    };
    onEveryDevice([&](int d) {
        for (int i = 0; i < kBlocks; ++i) book.allocated(&memory[d][i], d + 1, d);
    });
    // Every other block is freed by the next device's thread, as a received tensor is.
    onEveryDevice([&](int d) {
        for (int i = 0; i < kBlocks; i += 2) book.freed(&memory[(d + 1) % kDevices][i]);
    });
    for (int d = 0; d < kDevices; ++d) {
        EXPECT_EQ(book.current(d), (d + 1) * kBlocks / 2) << d;
        EXPECT_EQ(book.peak(d), (d + 1) * kBlocks) << d;
    }
}

}  // namespace
