// InstructionClock on the CPU: marks are the steady clock's readings since the origin, known at
// once, and released marks are refused rather than misread. (The CUDA-event branch needs a GPU.)
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "executor/InstructionClock.h"

namespace {

using Clock = std::chrono::steady_clock;

TEST(InstructionClock, CpuMarksAreSteadyClockMicrosecondsSinceTheOrigin) {
    const auto origin = Clock::now() - std::chrono::milliseconds(5);
    mario::exec::InstructionClock clock(c10::Device(c10::kCPU), origin);
    const auto before = Clock::now();
    const auto first = clock.mark();
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    const auto second = clock.mark();
    const auto after = Clock::now();
    ASSERT_TRUE(clock.reached(first));
    ASSERT_TRUE(clock.reached(second));
    const double lo = std::chrono::duration<double, std::micro>(before - origin).count();
    const double hi = std::chrono::duration<double, std::micro>(after - origin).count();
    const double t1 = clock.microseconds(first), t2 = clock.microseconds(second);
    EXPECT_GE(t1, lo);
    EXPECT_LE(t2, hi);
    EXPECT_GE(t1, 5000.0);       // the origin lies 5 ms before the first mark
    EXPECT_GE(t2 - t1, 3000.0);  // the sleep between the marks
}

TEST(InstructionClock, ReleasedMarksAreRefusedAndLaterOnesKeepTheirTimes) {
    mario::exec::InstructionClock clock(c10::Device(c10::kCPU), Clock::now());
    const auto a = clock.mark();
    const auto b = clock.mark();
    const auto c = clock.mark();
    const double tc = clock.microseconds(c);
    clock.release(b);
    EXPECT_THROW(clock.microseconds(a), std::logic_error);
    EXPECT_THROW(clock.reached(b), std::logic_error);
    EXPECT_DOUBLE_EQ(clock.microseconds(c), tc);
    const auto d = clock.mark();  // numbering goes on after a release
    EXPECT_EQ(d, c + 1);
    EXPECT_GE(clock.microseconds(d), tc);
}

}  // namespace
