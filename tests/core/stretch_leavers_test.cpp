// StretchLeavers on hand-worked stretches: which Rs may leave, and the most time they take out.
#include <gtest/gtest.h>

#include "core/sim/DeviceRecomputes.h"
#include "core/sim/StretchLeavers.h"

namespace mario {
namespace {

// Three later Rs whose dropped forwards would all be alive over the same three points of the
// memory program: two of 5 ms with large activations, one of 3 ms with small ones. The room
// holds two small sets or one large and one small, never two large.
DeviceRecomputes twoSizes() {
    DeviceRecomputes device;
    device.rs = {{/*forward*/ 1, /*backward*/ 5, 5.0, 0, 3, 2.0, /*size*/ 1},
                 {2, 6, 5.0, 0, 3, 2.0, 1},
                 {3, 7, 3.0, 0, 3, 1.0, 0}};
    device.capacity = {2, 2, 2, 2};          // at the small size
    device.capacityBySize = {{2, 2, 2, 2},   // small alone
                             {1, 1, 1, 1}};  // large alone
    device.droppable = 2;
    return device;
}

TEST(StretchLeavers, CountsLargeAndSmallRsAgainstTheirOwnRoom) {
    const DeviceRecomputes device = twoSizes();
    StretchLeavers leavers(device);
    leavers.start(0);
    for (const auto& r : device.rs) leavers.add(r, /*early=*/false);
    // At the smallest size two may leave, and the two longest are 10 ms; but only one large set
    // fits, so the best feasible pair is one 5 ms and the 3 ms R.
    EXPECT_DOUBLE_EQ(leavers.mostTime(), 8.0);
}

TEST(StretchLeavers, WithOneSizeTheLongestThatFitLeave) {
    DeviceRecomputes device = twoSizes();
    device.capacityBySize.clear();
    for (auto& r : device.rs) r.size = 0;
    StretchLeavers leavers(device);
    leavers.start(0);
    for (const auto& r : device.rs) leavers.add(r, false);
    EXPECT_DOUBLE_EQ(leavers.mostTime(), 10.0);
}

TEST(StretchLeavers, EarlyRsAreLimitedByTheRoomBeforeTheStretch) {
    DeviceRecomputes device = twoSizes();
    device.capacityBySize.clear();
    for (auto& r : device.rs) r.size = 0;
    device.capacity = {1, 3, 3, 3};  // one set fits just before a stretch that starts at point 1
    device.droppable = 3;
    StretchLeavers leavers(device);
    leavers.start(1);
    for (const auto& r : device.rs) leavers.add(r, /*early=*/true);
    EXPECT_DOUBLE_EQ(leavers.mostTime(), 5.0);
    // A new stretch starts empty.
    leavers.start(1);
    EXPECT_DOUBLE_EQ(leavers.mostTime(), 0.0);
    leavers.add(device.rs[2], /*early=*/false);
    EXPECT_DOUBLE_EQ(leavers.mostTime(), 3.0);
}

}  // namespace
}  // namespace mario
