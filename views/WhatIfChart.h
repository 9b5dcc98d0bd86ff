#pragma once
// The What-if view's charts (issue 41): throughput (or step), MFU and the fullest device's peak
// memory against one knob, stacked on one x axis, one line per scheme × pass set. The memory
// budget is a dashed line on the peak chart, named in its legend; the largest value that fits
// is ringed on every chart; a refused point is a gap in its line with a cross at the foot of
// the chart, and hovering any point says what it is (its numbers, or why it was refused).
// Clicking a point that ran reports it, so the window can open that configuration.
#include <QWidget>
#include <optional>
#include <vector>

#include "core/sweep/SweepChart.h"
#include "views/WhatIfLines.h"

class QCustomPlot;
class QLabel;

namespace mario::views {

class WhatIfChart : public QWidget {
    Q_OBJECT
public:
    // A hover or click within this many pixels of a point's marker finds it.
    static constexpr int kHitPixels = 10;
    explicit WhatIfChart(QWidget* parent = nullptr);

    void setLines(WhatIfLines lines);
    // No sweep to show: the charts empty, `message` in their place.
    void clear(const QString& message);
    const WhatIfLines& lines() const { return lines_; }
    // The top chart: SweepMetric::Throughput (samples/s; unit-cost sweeps have none) or Step.
    void setTopMetric(SweepMetric metric);
    SweepMetric topMetric() const { return topMetric_; }

    QCustomPlot* topPlot() const { return plots_[0]; }
    QCustomPlot* mfuPlot() const { return plots_[1]; }
    QCustomPlot* peakPlot() const { return plots_[2]; }
    SweepMetric metricOf(const QCustomPlot* plot) const;
    // Where the point of line `line` at x index `x` is drawn on `plot`, in the plot widget's
    // pixels (a refused point: its cross at the foot), or nothing (an MFU not known).
    std::optional<QPointF> pointPixel(const QCustomPlot* plot, int line, int x) const;
    // The sweep point drawn nearest `pixel` on `plot` within kHitPixels, or -1.
    int pointAt(const QCustomPlot* plot, QPointF pixel) const;
    // The sentence a hover over that point shows.
    QString describe(int pointIndex) const;
    QString messageText() const;

signals:
    // A point that ran was clicked (refused ones only say why, on hover).
    void pointClicked(int pointIndex);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void rebuild();
    void rebuildPlot(QCustomPlot* plot, SweepMetric metric);
    // The foot of `plot` where refused points sit.
    double footOf(const QCustomPlot* plot) const;
    std::optional<double> valueOf(int pointIndex, SweepMetric metric) const;

    QLabel* message_;
    QLabel* slice_;
    QCustomPlot* plots_[3];
    WhatIfLines lines_;
    SweepMetric topMetric_ = SweepMetric::Throughput;
    double peakUnit_ = 1e9;  // bytes per unit of the peak chart
    double stepUnit_ = 1;    // ms per unit of a step chart
};

}  // namespace mario::views
