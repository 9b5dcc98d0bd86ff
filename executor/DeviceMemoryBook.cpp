#include "executor/DeviceMemoryBook.h"

#include <algorithm>

namespace mario::exec {

DeviceMemoryBook::DeviceMemoryBook(int devices)
    : current_(static_cast<std::size_t>(std::max(0, devices)), 0), peak_(current_) {}

void DeviceMemoryBook::allocated(const void* ptr, std::int64_t bytes, int device) {
    std::lock_guard lock(mutex_);
    if (auto old = charges_.find(ptr); old != charges_.end()) {
        current_[static_cast<std::size_t>(old->second.device)] -= old->second.bytes;
        charges_.erase(old);
    }
    if (device < 0 || device >= static_cast<int>(current_.size()) || bytes <= 0) return;
    charges_[ptr] = Charge{bytes, device};
    auto& now = current_[static_cast<std::size_t>(device)];
    now += bytes;
    auto& most = peak_[static_cast<std::size_t>(device)];
    most = std::max(most, now);
}

void DeviceMemoryBook::freed(const void* ptr) {
    std::lock_guard lock(mutex_);
    auto it = charges_.find(ptr);
    if (it == charges_.end()) return;
    current_[static_cast<std::size_t>(it->second.device)] -= it->second.bytes;
    charges_.erase(it);
}

double DeviceMemoryBook::current(int device) const {
    std::lock_guard lock(mutex_);
    return static_cast<double>(current_.at(static_cast<std::size_t>(device)));
}

double DeviceMemoryBook::peak(int device) const {
    std::lock_guard lock(mutex_);
    return static_cast<double>(peak_.at(static_cast<std::size_t>(device)));
}

std::vector<double> DeviceMemoryBook::peaks() const {
    std::lock_guard lock(mutex_);
    return std::vector<double>(peak_.begin(), peak_.end());
}

void DeviceMemoryBook::resetPeaks() {
    std::lock_guard lock(mutex_);
    peak_ = current_;
}

}  // namespace mario::exec
