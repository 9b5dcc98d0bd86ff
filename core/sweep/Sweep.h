#pragma once
// The sweep engine (issue 41), Qt-free. API for the CLI (`mario sweep`) and the window:
//
//   #include "core/sweep/Sweep.h"
//   SweepSpec spec;  // (fields assigned one by one: -Wmissing-field-initializers)
//   spec.base = config; spec.knobs = {*parseVary("micro_batch_size=1,2,4,8")};
//   spec.schemes = *parseSchemeChoices("1f1b,chimera"); spec.pass_sets = *parsePassSets("none;all");
//   std::atomic<bool> cancel{false};
//   Result<SweepResult> r = runSweep(spec, [](const SweepProgress& p, const SweepPoint& latest) {...}, &cancel);
//   r->points[r->indexOf(value, 0, scheme, passSet)] ...
//
// Each point goes through the path of `mario simulate` (core/session: openConfigDocument then
// prepareSchedule), on worker threads (core/tune/ParallelFor.h), cancellable between points.
// Capacity (largest value that fits) is in core/sweep/Capacity.h; CSV, JSON and the SVG chart
// in core/sweep/SweepExport.h and core/sweep/SvgLineChart.h.
#include <atomic>
#include <functional>

#include "core/sweep/SweepPoint.h"
#include "core/sweep/SweepSpec.h"
#include "core/util/Result.h"

namespace mario {

struct SweepProgress {
    int done = 0;
    int total = 0;
};

struct SweepResult {
    SweepSpec spec;
    // Knob 1 outermost, then knob 2, scheme, pass set: every combination, in that order, whatever
    // the thread count. A refused point is kept with its reason.
    std::vector<SweepPoint> points;
    bool cancelled = false;
    double elapsed_ms = 0;
    int threads = 1;

    int schemeCount() const;
    int passSetCount() const;
    // The point of value index v1 (and v2 for a second knob), scheme index s and pass set p.
    int indexOf(int v1, int v2, int s, int p) const;
    // "1f1b none", "chimera all": the line a chart draws for scheme s and pass set p.
    std::string seriesLabel(int s, int p) const;
};

// Called from worker threads, serialised by the engine, after each point.
using SweepProgressFn = std::function<void(const SweepProgress&, const SweepPoint& latest)>;

// Errors only for a spec that cannot run (checkSweepSpec); points that cannot run are refusals.
Result<SweepResult> runSweep(const SweepSpec& spec, const SweepProgressFn& progress = {},
                             const std::atomic<bool>* cancel = nullptr);

// One point: `base` with the knobs set to `values`, the scheme and the passes, through the
// simulate path. Thread-safe. What runSweep and capacity evaluate.
SweepPoint evaluatePoint(const Config& base, const std::vector<const SweepKnob*>& knobs,
                         const std::vector<KnobValue>& values, const std::optional<SchemeChoice>& scheme,
                         const std::optional<std::vector<PassId>>& passes, const std::atomic<bool>* cancel = nullptr);

}  // namespace mario
