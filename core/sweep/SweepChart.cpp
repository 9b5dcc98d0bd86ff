#include "core/sweep/SweepChart.h"

#include <cstdio>

#include "core/util/HumanBytes.h"

namespace mario {
namespace {

// A point that does not fit could not train: a gap in the time and throughput charts (its note
// says why); the peak chart shows it above the limit line.
std::optional<double> metricOf(const SweepPoint& point, SweepMetric metric) {
    if (!point.ok() || (metric != SweepMetric::Peak && !point.fitsMemory())) return std::nullopt;
    switch (metric) {
        case SweepMetric::Throughput: return point.samples_per_s;
        case SweepMetric::Step: return point.step_ms;
        case SweepMetric::Mfu: return point.mfu > 0 ? std::optional<double>(100 * point.mfu) : std::nullopt;
        case SweepMetric::Peak: return point.peak_bytes / 1e9;
    }
    return std::nullopt;
}

const char* metricLabel(SweepMetric metric, bool unit) {
    switch (metric) {
        case SweepMetric::Throughput: return "samples/s";
        case SweepMetric::Step: return unit ? "step (time units)" : "step (ms)";
        case SweepMetric::Mfu: return "MFU (%)";
        case SweepMetric::Peak: return "peak memory of the fullest device (GB)";
    }
    return "";
}

// A ladder where each value is at least twice the one before reads best on a log axis.
bool doubling(const std::vector<double>& x) {
    if (x.size() < 3) return false;
    for (std::size_t i = 1; i < x.size(); ++i)
        if (!(x[i - 1] > 0 && x[i] >= 2 * x[i - 1] * 0.999)) return false;
    return true;
}

}  // namespace

Result<SweepMetric> parseSweepMetric(std::string_view text) {
    if (text == "throughput") return SweepMetric::Throughput;
    if (text == "step") return SweepMetric::Step;
    if (text == "mfu") return SweepMetric::Mfu;
    if (text == "peak") return SweepMetric::Peak;
    return makeError("unknown metric \"" + std::string(text) + "\" (expected throughput, step, mfu or peak)");
}

SvgLineChart sweepChart(const SweepResult& result, SweepMetric metric, const CapacityResult* capacity) {
    SvgLineChart chart;
    const KnobRange& range = result.spec.knobs.front();
    chart.x_label = std::string(range.knob->key);
    for (std::size_t v = 0; v < range.values.size(); ++v)
        chart.x.push_back(range.values[v].isWord() ? static_cast<double>(v + 1) : range.values[v].number);
    if (range.knob->kind == SweepKnob::Kind::Word) chart.x_label += " (" + std::string(range.knob->words) + ")";
    chart.log_x = doubling(chart.x);
    bool unit = false;
    for (const SweepPoint& point : result.points) unit = unit || (point.ok() && point.unit_costs);
    chart.y_label = metricLabel(metric, unit);
    chart.title = chart.y_label + " against " + std::string(range.knob->key);
    if (result.spec.knobs.size() > 1)
        chart.title += " (" + std::string(result.spec.knobs[1].knob->key) + " = " +
                       result.spec.knobs[1].values.front().text() + ")";
    for (int s = 0; s < result.schemeCount(); ++s)
        for (int p = 0; p < result.passSetCount(); ++p) {
            SvgSeries series;
            series.label = result.seriesLabel(s, p);
            // One colour per scheme, one dash per pass set, when both are compared.
            if (result.schemeCount() > 1 && result.passSetCount() > 1) {
                series.colour = s;
                series.dash = p;
            }
            std::optional<double> largest;
            if (capacity)
                for (const CapacityAnswer& answer : capacity->answers)
                    if (answer.pass_set == p && (result.spec.schemes.empty() || answer.scheme == result.spec.schemes[s]))
                        largest = answer.largest;
            for (std::size_t v = 0; v < range.values.size(); ++v) {
                const SweepPoint& point = result.points[result.indexOf(static_cast<int>(v), 0, s, p)];
                series.y.push_back(metricOf(point, metric));
                char note[96];
                std::snprintf(note, sizeof note, "%s = %s: ", range.knob->key.data(), range.values[v].text().c_str());
                std::string why = point.refusal;
                if (point.ok())
                    why = (point.fitsMemory() ? "" : "does not fit: ") + humanBytes(point.peak_bytes) +
                          " peak on device " + std::to_string(point.fullest_device);
                series.notes.push_back(note + why);
                if (largest && !range.values[v].isWord() && range.values[v].number == *largest)
                    series.marked = static_cast<int>(v);
            }
            // Without capacity's answers, a knob that grows memory marks the last point of the run
            // of fitting points it starts with: the largest that fits among the values swept.
            if (!capacity && range.knob->grows_memory && range.knob->kind != SweepKnob::Kind::Word)
                for (std::size_t v = 0; v < range.values.size(); ++v) {
                    const SweepPoint& point = result.points[result.indexOf(static_cast<int>(v), 0, s, p)];
                    if (!point.ok()) continue;
                    if (!point.fitsMemory()) break;
                    series.marked = static_cast<int>(v);
                }
            chart.series.push_back(std::move(series));
        }
    if (metric == SweepMetric::Peak)
        for (const SweepPoint& point : result.points)
            if (point.ok() && point.budget_bytes) {
                chart.limit = *point.budget_bytes / 1e9;
                chart.limit_label = "memory limit " + humanBytes(*point.budget_bytes);
                break;
            }
    return chart;
}

}  // namespace mario
