#include "app/gui/LiveMeasurements.h"

#include <algorithm>

#include "core/util/Median.h"

namespace mario::gui {
namespace {

// A run asks for at most a million iterations (the executor's bound); the window's spin box
// allows far fewer. Beyond this an event is from something else, and is not stored.
constexpr int kMaxStoredIterations = 10000;

}  // namespace

void LiveMeasurements::reset(const Plan& plan, const SimResult& simulated) {
    plan_ = plan;
    simulated_.assign(plan_.devices.size(), {});
    for (std::size_t d = 0; d < plan_.devices.size(); ++d) {
        const std::size_t n = plan_.devices[d].program.size();
        simulated_[d].assign(n, InstructionTiming{});
        if (d >= simulated.devices.size()) continue;
        const auto& timings = simulated.devices[d].timings;
        std::copy_n(timings.begin(), std::min(n, timings.size()), simulated_[d].begin());
    }
    makespan_ = simulated.makespan_ms;
    times_.clear();
    computeCounts_.clear();
    iterations_.clear();
    counted_.reset();
}

LiveMeasurements::Iteration& LiveMeasurements::iteration(int index) {
    while (static_cast<int>(iterations_.size()) <= index) {
        Iteration next;
        next.index = static_cast<int>(iterations_.size());
        iterations_.push_back(next);
        Times empty(plan_.devices.size());
        for (std::size_t d = 0; d < plan_.devices.size(); ++d) empty[d].resize(plan_.devices[d].program.size());
        times_.push_back(std::move(empty));
        computeCounts_.push_back(0);
    }
    return iterations_[static_cast<std::size_t>(index)];
}

void LiveMeasurements::record(int device, int index, double startMs, double endMs, int iteration) {
    if (iteration < 0 || iteration >= kMaxStoredIterations) return;
    if (device < 0 || device >= static_cast<int>(plan_.devices.size())) return;
    if (index < 0 || index >= static_cast<int>(plan_.devices[static_cast<std::size_t>(device)].program.size())) return;
    this->iteration(iteration);
    counted_.reset();
    auto& slot =
        times_[static_cast<std::size_t>(iteration)][static_cast<std::size_t>(device)][static_cast<std::size_t>(index)];
    if (!slot && isCompute(plan_.devices[static_cast<std::size_t>(device)].program[static_cast<std::size_t>(index)].op))
        ++computeCounts_[static_cast<std::size_t>(iteration)];
    slot = std::make_pair(startMs, std::max(endMs, startMs));
}

void LiveMeasurements::finishIteration(int index, double stepMs, double loss) {
    if (index < 0 || index >= kMaxStoredIterations) return;
    Iteration& it = iteration(index);
    counted_.reset();
    it.finished = true;
    it.step_ms = stepMs;
    it.loss = loss;
}

int LiveMeasurements::latestIteration() const {
    for (int i = static_cast<int>(times_.size()) - 1; i >= 0; --i)
        if (measuredCount(i) > 0) return i;
    return -1;
}

const std::vector<int>& LiveMeasurements::countedIterations() const {
    if (counted_) return *counted_;
    std::vector<int> later, warm;
    for (int i = 0; i < static_cast<int>(times_.size()); ++i)
        if (measuredCount(i) > 0 || iterations_[static_cast<std::size_t>(i)].finished)
            (i < kWarmupIterations ? warm : later).push_back(i);
    counted_ = later.empty() ? std::move(warm) : std::move(later);
    return *counted_;
}

bool LiveMeasurements::warmupOnly() const {
    const std::vector<int>& counted = countedIterations();
    return !counted.empty() && counted.front() < kWarmupIterations;
}

std::optional<std::pair<double, double>> LiveMeasurements::measured(int iteration, int device, int index) const {
    if (iteration < 0 || iteration >= static_cast<int>(times_.size())) return std::nullopt;
    const Times& t = times_[static_cast<std::size_t>(iteration)];
    if (device < 0 || device >= static_cast<int>(t.size())) return std::nullopt;
    const auto& lane = t[static_cast<std::size_t>(device)];
    if (index < 0 || index >= static_cast<int>(lane.size())) return std::nullopt;
    return lane[static_cast<std::size_t>(index)];
}

int LiveMeasurements::measuredCount(int iteration) const {
    if (iteration < 0 || iteration >= static_cast<int>(computeCounts_.size())) return 0;
    return computeCounts_[static_cast<std::size_t>(iteration)];
}

std::optional<double> LiveMeasurements::medianDuration(int device, int index) const {
    std::vector<double> durations;
    for (int it : countedIterations())
        if (auto m = measured(it, device, index)) durations.push_back(m->second - m->first);
    if (durations.empty()) return std::nullopt;
    return median(std::move(durations));
}

int LiveMeasurements::samples(int device, int index) const {
    int n = 0;
    for (int it : countedIterations()) n += measured(it, device, index) ? 1 : 0;
    return n;
}

InstructionTiming LiveMeasurements::simulatedTiming(int device, int index) const {
    if (device < 0 || device >= static_cast<int>(simulated_.size())) return {};
    const auto& lane = simulated_[static_cast<std::size_t>(device)];
    return index >= 0 && index < static_cast<int>(lane.size()) ? lane[static_cast<std::size_t>(index)]
                                                               : InstructionTiming{};
}

double LiveMeasurements::simulatedDuration(int device, int index) const {
    const InstructionTiming t = simulatedTiming(device, index);
    return t.end - t.start;
}

bool LiveMeasurements::comparable(int device, int index) const {
    // simulatedDuration is 0 outside the plan, so the program lookup below is in range.
    return simulatedDuration(device, index) > 0 &&
           isCompute(plan_.devices[static_cast<std::size_t>(device)].program[static_cast<std::size_t>(index)].op);
}

std::optional<double> LiveMeasurements::ratio(int device, int index) const {
    if (!comparable(device, index)) return std::nullopt;
    const auto measuredMs = medianDuration(device, index);
    if (!measuredMs) return std::nullopt;
    return *measuredMs / simulatedDuration(device, index);
}

double LiveMeasurements::medianStepMs() const {
    std::vector<double> steps;
    for (int it : countedIterations()) {
        const Iteration& i = iterations_[static_cast<std::size_t>(it)];
        if (i.finished) steps.push_back(i.step_ms);
    }
    return steps.empty() ? 0 : median(std::move(steps));
}

std::vector<LiveMeasurements::DeviceDeviation> LiveMeasurements::perDevice() const {
    std::vector<DeviceDeviation> out(plan_.devices.size());
    for (std::size_t d = 0; d < plan_.devices.size(); ++d) {
        const int device = static_cast<int>(d);
        for (std::size_t i = 0; i < plan_.devices[d].program.size(); ++i) {
            const int index = static_cast<int>(i);
            if (!comparable(device, index)) continue;
            const auto measuredMs = medianDuration(device, index);
            if (!measuredMs) continue;
            out[d].simulated_ms += simulatedDuration(device, index);
            out[d].measured_ms += *measuredMs;
            ++out[d].instructions;
        }
    }
    return out;
}

}  // namespace mario::gui
