#pragma once
// What the What-if charts draw of a sweep (core/sweep/Sweep.h), prepared apart from drawing so
// that it is plain data a test can read: the knob's values along x, one line per scheme × pass
// set, the sweep point behind every position of every line (refused ones too: a gap in the
// line, with their reason), and on each line the largest knob value whose point fits the
// memory budget, for a knob that grows memory. With two knobs the lines run along the first, at one value of the second.
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

#include "core/sweep/Sweep.h"
#include "core/sweep/SweepChart.h"

namespace mario::views {

struct WhatIfLine {
    QString label;  // "chimera all", as SweepResult::seriesLabel
    int scheme = 0, passSet = 0;
    std::vector<int> points;              // per x: the index into SweepResult::points
    std::optional<int> largestFitting;    // the x index of the largest value that fits
};

struct WhatIfLines {
    std::shared_ptr<const SweepResult> result;
    QString knob;          // the first knob's key, the x axis's label
    QString sliceText;     // with two knobs: "model.hidden = 5120", the second knob's value shown
    std::vector<double> x;  // positions: the values, or 0, 1, … for words
    QStringList xLabels;    // the values as written ("4", "flash")
    bool logX = false;      // a ladder of positive values spanning 8× or more (1, 2, 4, … 64)
    std::vector<WhatIfLine> lines;
    std::optional<double> limitBytes;  // the budget the points were judged against, when one

    const SweepPoint& point(int index) const { return result->points[static_cast<std::size_t>(index)]; }
    bool empty() const { return !result || lines.empty() || x.empty(); }
};

// The lines of `result` at value `slice` of the second knob (ignored with one knob).
WhatIfLines whatIfLines(std::shared_ptr<const SweepResult> result, int slice = 0);

// What a chart plots of a point: samples/s, the step in ms, MFU in per cent or the fullest
// device's peak in bytes; nullopt for a point that did not run (a gap) or an MFU not known.
std::optional<double> metricValue(const SweepPoint& point, SweepMetric metric);

// "chimera all, micro_batch_size 4: step 3.78 s, 16.9 samples/s, MFU 28.5%, peak 25.2 GB of
// 40 GB (device 0)", or the refusal: "… refused: 6 layers cannot fill the 8 stages …".
QString describePoint(const SweepPoint& point, const QString& line, const QString& knob, const QString& value);

}  // namespace mario::views
