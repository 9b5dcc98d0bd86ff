#include "core/sim/SharedHardware.h"

#include <algorithm>

namespace mario {

bool sharesHardware(const Plan& plan) {
    if (plan.devices.size() < 2) return false;
    return std::any_of(plan.stages.begin(), plan.stages.end(),
                       [](const StageSpec& s) { return s.cost.contention > 0 || s.cost.optimizerContention() > 0; });
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

bool stepsOptimizer(const Instruction& ins, const InstructionTiming& t) {
    return ins.op == Op::Optimizer && computes(ins, t);
}

// How many devices compute at each moment, as a step function with its running integral, so
// that the device-time inside any interval is two binary searches.
class BusyCount {
public:
    BusyCount() = default;  // counts nothing
    // Counts the instructions `counted` accepts.
    BusyCount(const Plan& plan, const SimResult& timeline,
              bool (*counted)(const Instruction&, const InstructionTiming&) = computes) {
        std::vector<double> starts, ends;
        for (std::size_t d = 0; d < plan.devices.size(); ++d) {
            const auto& program = plan.devices[d].program;
            const auto& timings = timeline.devices[d].timings;
            for (std::size_t i = 0; i < program.size() && i < timings.size(); ++i)
                if (counted(program[i], timings[i])) starts.push_back(timings[i].start), ends.push_back(timings[i].end);
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
    // How many others are counted during `t`, averaged over its run, when `t` itself is counted:
    // ∫ count dt / (end − start) − 1, clamped to what can be (rounding in a difference of large
    // areas over a tiny span).
    double othersDuring(const InstructionTiming& t, double most) const {
        return std::clamp((areaUntil(t.end) - areaUntil(t.start)) / (t.end - t.start) - 1.0, 0.0, most);
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
        for (std::size_t i = 0; i < program.size() && i < timings.size(); ++i)
            if (computes(program[i], timings[i])) row[i] = busy.othersDuring(timings[i], others);
    }
    return out;
}

ComputeStretch contentionStretch(const Plan& plan, const SimResult& timeline) {
    ComputeStretch stretch = busyNeighbours(plan, timeline);
    // An OPT's neighbours that step too are charged the optimizer's contention, the rest the
    // stage's: streaming steps split the HBM bandwidth (StageCost::optimizer_contention).
    const bool optimizerApart = std::any_of(plan.stages.begin(), plan.stages.end(), [](const StageSpec& s) {
        return s.cost.optimizerContention() != s.cost.contention;
    });
    const BusyCount stepping = optimizerApart ? BusyCount(plan, timeline, stepsOptimizer) : BusyCount();
    const double others = static_cast<double>(plan.devices.size()) - 1;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        for (std::size_t i = 0; i < stretch[d].size(); ++i) {
            const StageCost& cost = plan.stages[program[i].stage].cost;
            const auto& timings = timeline.devices[d].timings;
            const double busy = stretch[d][i];
            const double alsoStepping = optimizerApart && i < timings.size() && stepsOptimizer(program[i], timings[i])
                                            ? std::min(busy, stepping.othersDuring(timings[i], others))
                                            : 0.0;
            stretch[d][i] = 1.0 + cost.contention * (busy - alsoStepping) + cost.optimizerContention() * alsoStepping;
        }
    }
    return stretch;
}

}  // namespace mario
