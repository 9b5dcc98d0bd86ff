#pragma once
// Does a simulated schedule fit in memory, and where is it tightest? The CLI's memory line and
// --json, the window's summary and compare view and the tuner's feasibility all read these
// values, so "highest peak", "devices over" and what they are judged against mean one thing
// everywhere.
#include <optional>
#include <string>
#include <string_view>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"

namespace mario {

struct MemoryFit {
    // What the peaks are judged against. The explicit limit when the plan has one (it is also
    // what the passes keep within); else the card's own memory, since a schedule over the card
    // cannot run whatever anyone intended; else nothing, and every schedule fits.
    enum class Basis { None, Limit, Card };

    double highest_peak_bytes = 0;  // of the fullest device (0 with no devices)
    int fullest_device = 0;         // its index; the first one on ties
    int devices = 0;
    int devices_over = 0;  // over budget_bytes; 0 without one
    Basis basis = Basis::None;
    std::optional<double> budget_bytes;  // the limit or the card's memory, per basis

    // Nothing over the budget; true without one, where nothing can be over. Reports say whether
    // the schedule fits only when judged(): `--json`'s fits_memory is null without a budget
    // (true was claimed with nothing to judge against, issue 39).
    bool fits() const { return devices_over == 0; }
    bool judged() const { return budget_bytes.has_value(); }
    bool isOver(const DeviceStats& device) const { return budget_bytes && device.peak_bytes > *budget_bytes; }
};

// "limit", "card" or "none": the basis in --json and wherever it is named in one word.
std::string_view basisName(MemoryFit::Basis basis);
// What the peaks were judged against, in words, around `amount` as the caller formats it:
// "the 40.00 GB limit", "one card's 40.00 GB" (no limit set), or `amount` alone for None. The
// CLI, the summary, the memory chart and the compare table all say it so.
std::string budgetPhrase(MemoryFit::Basis basis, const std::string& amount);

// Against `limit_bytes` when given, else against `card_bytes`, else nothing.
MemoryFit memoryFit(const SimResult& result, std::optional<double> limit_bytes,
                    std::optional<double> card_bytes = std::nullopt);
// The plan's own limit, else its card (PlanInfo::device_memory_bytes).
MemoryFit memoryFit(const SimResult& result, const PlanInfo& info);

}  // namespace mario
