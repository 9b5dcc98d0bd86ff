#include "core/sweep/Sweep.h"

#include <chrono>
#include <mutex>

#include "core/sweep/PointRunner.h"
#include "core/tune/ParallelFor.h"

namespace mario {

int SweepResult::schemeCount() const { return std::max<int>(1, static_cast<int>(spec.schemes.size())); }
int SweepResult::passSetCount() const { return std::max<int>(1, static_cast<int>(spec.pass_sets.size())); }

int SweepResult::indexOf(int v1, int v2, int s, int p) const {
    const int second = spec.knobs.size() > 1 ? static_cast<int>(spec.knobs[1].values.size()) : 1;
    return ((v1 * second + (spec.knobs.size() > 1 ? v2 : 0)) * schemeCount() + s) * passSetCount() + p;
}

std::string SweepResult::seriesLabel(int s, int p) const {
    const std::string scheme = spec.schemes.empty()
                                   ? SchemeChoice{spec.base.parallel.scheme, spec.base.parallel.chunks}.label()
                                   : spec.schemes[s].label();
    if (spec.pass_sets.empty()) return scheme;
    return scheme + " " + passSetLabel(spec.pass_sets[p]);
}

SweepPoint evaluatePoint(const Config& base, const std::vector<const SweepKnob*>& knobs,
                         const std::vector<KnobValue>& values, const std::optional<SchemeChoice>& scheme,
                         const std::optional<std::vector<PassId>>& passes, const std::atomic<bool>* cancel) {
    return PointRunner(base).run(knobs, values, scheme, passes, cancel);
}

Result<SweepResult> runSweep(const SweepSpec& spec, const SweepProgressFn& progress, const std::atomic<bool>* cancel) {
    auto count = checkSweepSpec(spec);
    if (!count) return count.error();
    const auto started = std::chrono::steady_clock::now();
    SweepResult result;
    result.spec = spec;
    result.threads = workerThreads(spec.threads);
    const PointRunner runner(spec.base);
    std::vector<const SweepKnob*> knobs;
    for (const KnobRange& range : spec.knobs) knobs.push_back(range.knob);
    const int second = spec.knobs.size() > 1 ? static_cast<int>(spec.knobs[1].values.size()) : 1;
    const int schemes = result.schemeCount(), passSets = result.passSetCount();

    // Point i's coordinates, in indexOf's order.
    struct Coordinates {
        std::vector<KnobValue> values;
        std::optional<SchemeChoice> scheme;
        std::optional<std::vector<PassId>> passes;
        int pass_set = 0;
    };
    auto coordinates = [&](int i) {
        Coordinates c;
        const int p = i % passSets, s = (i / passSets) % schemes, rest = i / (passSets * schemes);
        c.values.push_back(spec.knobs[0].values[rest / second]);
        if (spec.knobs.size() > 1) c.values.push_back(spec.knobs[1].values[rest % second]);
        if (!spec.schemes.empty()) c.scheme = spec.schemes[s];
        if (!spec.pass_sets.empty()) c.passes = spec.pass_sets[p];
        c.pass_set = p;
        return c;
    };

    result.points.resize(*count);
    std::vector<std::uint8_t> done(*count, 0);
    std::mutex lock;
    SweepProgress status{0, *count};
    parallelFor(*count, result.threads, cancel, [&](int i) {
        const Coordinates c = coordinates(i);
        SweepPoint point = runner.run(knobs, c.values, c.scheme, c.passes, cancel);
        point.pass_set = c.pass_set;
        std::lock_guard<std::mutex> guard(lock);
        result.points[i] = std::move(point);
        done[i] = 1;
        ++status.done;
        if (progress) progress(status, result.points[i]);
    });
    for (int i = 0; i < *count; ++i)
        if (!done[i]) {
            const Coordinates c = coordinates(i);
            SweepPoint& point = result.points[i];
            point.values = c.values;
            point.scheme = c.scheme.value_or(SchemeChoice{spec.base.parallel.scheme, spec.base.parallel.chunks});
            point.pass_set = c.pass_set;
            point.refusal = "cancelled";
        }
    result.cancelled = cancel && cancel->load();
    result.elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return result;
}

}  // namespace mario
