#pragma once
// How the passes compare sums that may be equal. Bytes and milliseconds are running sums, and
// two sums of the same terms in another order (a device's static bytes plus its program's
// levels, against the simulator's peak) differ in their last bits. An absolute slack does not
// scale: 1e-9 bytes is below one ulp at the ~2e10 bytes of a real model's device, so a drop that
// fits the budget exactly was refused whenever the bytes were not integers (issue 30: 989.85 ms
// where 793.51 fit). The slack here is relative to the magnitudes compared: 1e-12 of them is a
// few thousand ulps (room for the rounding of sums over tens of thousands of instructions), and
// far below any real difference of two costs (0.02 bytes at 2e10, 1 ns at 1000 s).
#include <algorithm>
#include <cmath>

namespace mario {

constexpr double kRelativeTolerance = 1e-12;

// What rounding can put between `a` and `b`.
inline double roundingOf(double a, double b) { return kRelativeTolerance * std::max({std::abs(a), std::abs(b), 1.0}); }

// a ≤ b up to rounding: a fits under b, or a step is no longer than b.
inline bool atMost(double a, double b) { return a <= b + roundingOf(a, b); }

// a < b beyond rounding: a step that is really shorter.
inline bool clearlyBelow(double a, double b) { return a < b - roundingOf(a, b); }

}  // namespace mario
