// core/util/Median.h: the one median the profiler and the live-run window summarise
// measurements with. Expected values worked by hand.
#include <gtest/gtest.h>

#include "core/util/Median.h"

namespace mario {
namespace {

TEST(Median, OddCountIsTheMiddleValue) {
    EXPECT_DOUBLE_EQ(median({5}), 5);
    EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
    EXPECT_DOUBLE_EQ(median({10, 1.5, 7, 2, 100}), 7);  // one outlier does not move it
}

TEST(Median, EvenCountIsTheMeanOfTheMiddleTwo) {
    EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median({2, 2}), 2);
    EXPECT_DOUBLE_EQ(median({-1, 9}), 4);
}

}  // namespace
}  // namespace mario
