#include "core/sim/MemoryFit.h"

namespace mario {

std::string_view basisName(MemoryFit::Basis basis) {
    switch (basis) {
        case MemoryFit::Basis::Limit: return "limit";
        case MemoryFit::Basis::Card: return "card";
        case MemoryFit::Basis::None: break;
    }
    return "none";
}

std::string budgetPhrase(MemoryFit::Basis basis, const std::string& amount) {
    switch (basis) {
        case MemoryFit::Basis::Limit: return "the " + amount + " limit";
        case MemoryFit::Basis::Card: return "one card's " + amount;
        case MemoryFit::Basis::None: break;
    }
    return amount;
}

MemoryFit memoryFit(const SimResult& result, std::optional<double> limit_bytes, std::optional<double> card_bytes) {
    MemoryFit fit;
    if (limit_bytes) {
        fit.basis = MemoryFit::Basis::Limit;
        fit.budget_bytes = limit_bytes;
    } else if (card_bytes) {
        fit.basis = MemoryFit::Basis::Card;
        fit.budget_bytes = card_bytes;
    }
    fit.devices = static_cast<int>(result.devices.size());
    bool first = true;
    for (const DeviceStats& device : result.devices) {
        if (first || device.peak_bytes > fit.highest_peak_bytes) {
            fit.highest_peak_bytes = device.peak_bytes;
            fit.fullest_device = device.index;
            first = false;
        }
        fit.devices_over += fit.isOver(device);
    }
    return fit;
}

MemoryFit memoryFit(const SimResult& result, const PlanInfo& info) {
    return memoryFit(result, info.memory_limit_bytes, info.device_memory_bytes);
}

}  // namespace mario
