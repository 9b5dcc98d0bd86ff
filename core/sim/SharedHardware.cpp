#include "core/sim/SharedHardware.h"

#include <algorithm>

namespace mario {

bool sharesHardware(const Plan& plan) {
    if (plan.devices.size() < 2) return false;
    return std::any_of(plan.stages.begin(), plan.stages.end(),
                       [](const StageSpec& s) { return s.cost.contention > 0; });
}

ComputeStretch aloneStretch(const Plan& plan) {
    ComputeStretch stretch;
    for (const auto& device : plan.devices) stretch.emplace_back(device.program.size(), 1.0);
    return stretch;
}

namespace {

bool computes(const Instruction& ins, const InstructionTiming& t) {
    return t.end > t.start && ins.op != Op::RecvForward && ins.op != Op::RecvBackward;
}

// How many devices compute at each moment, as a step function with its running integral, so
// that the device-time inside any interval is two binary searches.
class BusyCount {
public:
    BusyCount(const Plan& plan, const SimResult& timeline) {
        std::vector<double> starts, ends;
        for (std::size_t d = 0; d < plan.devices.size(); ++d) {
            const auto& program = plan.devices[d].program;
            const auto& timings = timeline.devices[d].timings;
            for (std::size_t i = 0; i < program.size() && i < timings.size(); ++i)
                if (computes(program[i], timings[i]))
                    starts.push_back(timings[i].start), ends.push_back(timings[i].end);
        }
        // Two sorted lists of plain numbers merge faster than one of (time, ±1) pairs sorts
        // (a 385 152-instruction plan re-times its stretch in every round).
        std::sort(starts.begin(), starts.end());
        std::sort(ends.begin(), ends.end());
        int count = 0;
        double area = 0;
        std::size_t a = 0, b = 0;
        while (a < starts.size() || b < ends.size()) {
            const double t = b == ends.size() || (a < starts.size() && starts[a] < ends[b]) ? starts[a] : ends[b];
            if (!times_.empty()) area += counts_.back() * (t - times_.back());
            while (a < starts.size() && starts[a] == t) ++count, ++a;
            while (b < ends.size() && ends[b] == t) --count, ++b;
            times_.push_back(t);
            counts_.push_back(count);
            areas_.push_back(area);
        }
    }
    // ∫ busy devices dt from the first edge to `t`.
    double areaUntil(double t) const {
        const auto k = std::upper_bound(times_.begin(), times_.end(), t) - times_.begin();
        if (k == 0) return 0;
        return areas_[k - 1] + counts_[k - 1] * (t - times_[k - 1]);
    }

private:
    std::vector<double> times_, areas_;
    std::vector<int> counts_;  // devices computing from times_[k] to times_[k + 1]
};

}  // namespace

std::vector<std::vector<double>> busyNeighbours(const Plan& plan, const SimResult& timeline) {
    const BusyCount busy(plan, timeline);
    const double others = static_cast<double>(plan.devices.size()) - 1;
    std::vector<std::vector<double>> out;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        const auto& timings = timeline.devices[d].timings;
        std::vector<double>& row = out.emplace_back(program.size(), 0.0);
        for (std::size_t i = 0; i < program.size() && i < timings.size(); ++i) {
            const InstructionTiming& t = timings[i];
            if (!computes(program[i], t)) continue;
            const double span = t.end - t.start;
            // Clamped to what can be: rounding in a difference of large areas over a tiny span.
            row[i] = std::clamp((busy.areaUntil(t.end) - busy.areaUntil(t.start)) / span - 1.0, 0.0, others);
        }
    }
    return out;
}

ComputeStretch contentionStretch(const Plan& plan, const SimResult& timeline) {
    ComputeStretch stretch = busyNeighbours(plan, timeline);
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        for (std::size_t i = 0; i < stretch[d].size(); ++i)
            stretch[d][i] = 1.0 + plan.stages[plan.devices[d].program[i].stage].cost.contention * stretch[d][i];
    return stretch;
}

}  // namespace mario
