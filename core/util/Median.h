#pragma once
// The median of a non-empty list: the middle value, or the mean of the middle two for an
// even count. Measured times are summarised by it (the profiler's repeats, a live run's
// iterations) so one disturbed sample cannot move the answer.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace mario {

inline double median(std::vector<double> values) {
    const std::size_t n = values.size();
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(values.begin(), middle, values.end());
    if (n % 2) return *middle;
    return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

}  // namespace mario
