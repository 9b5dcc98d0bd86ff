#include "views/WhatIfLines.h"

#include <QObject>
#include <algorithm>

#include "core/util/HumanBytes.h"
#include "views/TimeBase.h"

namespace mario::views {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

// A ladder of positive numbers whose largest is at least 8 times the smallest reads better on
// a log axis: 1, 2, 4, … 64 micro-batch sizes crowd into the left corner of a linear one.
bool wantsLogAxis(const std::vector<KnobValue>& values) {
    if (values.size() < 3) return false;
    double low = values.front().number, high = low;
    for (const KnobValue& v : values) {
        if (v.isWord() || v.number <= 0) return false;
        low = std::min(low, v.number);
        high = std::max(high, v.number);
    }
    return high >= 8 * low;
}

}  // namespace

WhatIfLines whatIfLines(std::shared_ptr<const SweepResult> result, int slice) {
    WhatIfLines lines;
    if (!result || result->spec.knobs.empty()) return lines;
    lines.result = result;
    const SweepSpec& spec = result->spec;
    const KnobRange& first = spec.knobs[0];
    lines.knob = qstr(std::string(first.knob->key));
    const bool words = first.knob->kind == SweepKnob::Kind::Word;
    for (std::size_t i = 0; i < first.values.size(); ++i) {
        lines.x.push_back(words ? static_cast<double>(i) : first.values[i].number);
        lines.xLabels << qstr(first.values[i].text());
    }
    lines.logX = !words && wantsLogAxis(first.values);
    if (spec.knobs.size() > 1) {
        const KnobRange& second = spec.knobs[1];
        slice = std::clamp(slice, 0, static_cast<int>(second.values.size()) - 1);
        lines.sliceText = QStringLiteral("%1 = %2").arg(qstr(std::string(second.knob->key)),
                                                        qstr(second.values[static_cast<std::size_t>(slice)].text()));
    }
    for (int s = 0; s < result->schemeCount(); ++s)
        for (int p = 0; p < result->passSetCount(); ++p) {
            WhatIfLine line;
            line.label = qstr(result->seriesLabel(s, p));
            line.scheme = s;
            line.passSet = p;
            for (int v = 0; v < static_cast<int>(first.values.size()); ++v) {
                const int index = result->indexOf(v, slice, s, p);
                line.points.push_back(index);
                const SweepPoint& point = result->points[static_cast<std::size_t>(index)];
                if (!lines.limitBytes && point.budget_bytes) lines.limitBytes = point.budget_bytes;
                // Only a knob that grows memory has a largest value that fits (a deeper pipeline
                // needs less per device). The largest value, not the last position: values may
                // be given in any order.
                if (first.knob->grows_memory && point.fitsMemory() && point.fits.has_value() && !words &&
                    (!line.largestFitting || lines.x[static_cast<std::size_t>(v)] >
                                                 lines.x[static_cast<std::size_t>(*line.largestFitting)]))
                    line.largestFitting = v;
            }
            lines.lines.push_back(std::move(line));
        }
    return lines;
}

std::optional<double> metricValue(const SweepPoint& point, SweepMetric metric) {
    if (!point.ok()) return std::nullopt;
    switch (metric) {
        case SweepMetric::Throughput:
            return point.unit_costs ? std::optional<double>() : std::optional<double>(point.samples_per_s);
        case SweepMetric::Step: return point.step_ms;
        case SweepMetric::Mfu: return point.mfu > 0 ? std::optional<double>(point.mfu * 100) : std::nullopt;
        case SweepMetric::Peak: return point.peak_bytes;
    }
    return std::nullopt;
}

QString describePoint(const SweepPoint& point, const QString& line, const QString& knob, const QString& value) {
    const QString where = QStringLiteral("%1, %2 %3").arg(line, knob, value);
    if (!point.evaluated) return QObject::tr("%1: not run (the sweep was cancelled)").arg(where);
    if (!point.refusal.empty()) return QObject::tr("%1 refused: %2").arg(where, qstr(point.refusal));
    const TimeBase base = point.unit_costs ? TimeBase::Units : TimeBase::Milliseconds;
    QStringList parts;
    parts << QObject::tr("step %1").arg(formatDuration(point.step_ms, base, 3));
    if (!point.unit_costs) parts << QObject::tr("%1 samples/s").arg(point.samples_per_s, 0, 'g', 4);
    if (point.mfu > 0) parts << QObject::tr("MFU %1%").arg(point.mfu * 100, 0, 'f', 1);
    QString peak = QObject::tr("peak %1").arg(qstr(humanBytes(point.peak_bytes)));
    if (point.budget_bytes) peak += QObject::tr(" of %1").arg(qstr(humanBytes(*point.budget_bytes)));
    peak += QObject::tr(" (device %1)").arg(point.fullest_device);
    parts << peak;
    if (point.fits) parts << (*point.fits ? QObject::tr("fits") : QObject::tr("does not fit"));
    return QStringLiteral("%1: %2").arg(where, parts.join(QStringLiteral(", ")));
}

}  // namespace mario::views
