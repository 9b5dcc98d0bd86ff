#pragma once
// Memory under the Gantt, sharing its time axis: per-device memory over time (one line per
// device), and per-device peak as bars against the device limit (a line), bars over the
// limit highlighted. Values are in GB for real models, in KB/MB for teaching plans. Curves are thinned to a few points per pixel, keeping each bucket's
// maximum so peaks never disappear.
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

#include "core/sim/SimResult.h"
#include "views/TimeBase.h"

class QCustomPlot;

namespace mario::views {

class MemoryChart : public QWidget {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget* parent = nullptr);

    // `result` must have been simulated with record_memory_curve.
    void setMemory(const SimResult& result, std::optional<double> limitBytes);

    // What the time axis counts: milliseconds (labelled µs/ms/s/min as the span asks) or the
    // abstract units of a unit-cost plan. Milliseconds until set.
    void setTimeBase(TimeBase base);
    TimeBase timeBase() const { return timeBase_; }

    QCustomPlot* curvePlot() const;
    QCustomPlot* peakPlot() const;
    int devicesOverLimit() const;

    // The curves as simulated (static + dynamic bytes, extended to the makespan), before
    // thinning; the graphs of curvePlot() hold them thinned to the visible range, in GB.
    const std::vector<std::vector<MemoryPoint>>& curves() const { return raw_; }
    // The unit both plots' values are in: the largest decimal unit (bytes, KB, MB, GB) in
    // which the tallest peak or the limit is at least 1.
    double unitBytes() const { return unitBytes_; }
    const QString& unitName() const { return unitName_; }

public slots:
    void setTimeRange(double lower, double upper);

private:
    void setupCurvePlot();
    void setupPeakPlot();
    void rebuildCurves();
    void rebuildPeaks(const SimResult& result);
    void addLimitLine(QCustomPlot* plot);
    // Re-thins every curve for the visible range and the plot's pixel width, if either changed.
    void rethin(bool force = false);

    QCustomPlot* curves_;
    QCustomPlot* peaks_;
    int overLimit_ = 0;
    TimeBase timeBase_ = TimeBase::Milliseconds;

    std::vector<std::vector<MemoryPoint>> raw_;
    std::optional<double> limitBytes_;
    double unitBytes_ = 1e9;
    QString unitName_ = QStringLiteral("GB");
    double makespan_ = 0;
    bool rangeFollowed_ = false;  // setTimeRange was called: the Gantt drives the x axis
    double thinnedLower_ = 0, thinnedUpper_ = 0;
    int thinnedWidth_ = -1;
};

}  // namespace mario::views
