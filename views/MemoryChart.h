#pragma once
// Memory under the Gantt, sharing its time axis: per-device memory over time (one line per
// device, a legend entry each up to 16 devices and a gradient strip beyond), and per-device
// peak as bars against the device limit (a dashed line, named in each plot's legend, never by a
// label over the data), bars over the limit highlighted; above both,
// a sentence naming the devices over the limit, so the verdict is on screen with the charts.
// Values are in GB for real models, in KB/MB for teaching plans. Curves are thinned to a few
// points per pixel, keeping each bucket's maximum so peaks never disappear.
#include <QString>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "core/sim/MemoryFit.h"
#include "core/sim/SimResult.h"
#include "views/MemoryChartData.h"
#include "views/TimeBase.h"

class QCustomPlot;
class QLabel;

namespace mario::views {

class MemoryChart : public QWidget {
    Q_OBJECT
public:
    // Beyond this many devices the curves chart draws the kFullestDrawn fullest devices and the
    // envelope of all of them (views/MemoryEnvelope.h), not one curve each.
    static constexpr int kCurvesUpTo = MemoryChartData::kCurvesUpTo;
    static constexpr int kFullestDrawn = MemoryChartData::kFullestDrawn;
    // The least height of each plot's axis rect (its drawing area), in pixels, by default: room
    // for three labelled ticks at the default font.
    static constexpr int kMinCurvesHeight = 80;
    static constexpr int kMinPeaksHeight = 60;
    explicit MemoryChart(QWidget* parent = nullptr);

    // `result` must have been simulated with record_memory_curve. The line and the verdict are
    // drawn against `limitBytes`, the plan's explicit limit.
    void setMemory(const SimResult& result, std::optional<double> limitBytes);
    // Against whatever `fit` judged by (core/sim/MemoryFit.h): the limit, or without one the
    // card's own memory, named as such ("one card 40 GB", "over the card"), or nothing.
    void setMemory(const SimResult& result, const MemoryFit& fit);
    // Data prepared beforehand (on a worker thread: views/MemoryChartData.h), kept, not copied.
    void setMemory(std::shared_ptr<const MemoryChartData> data);

    // What the time axis counts: milliseconds (labelled µs/ms/s/min as the span asks) or the
    // abstract units of a unit-cost plan. Milliseconds until set.
    void setTimeBase(TimeBase base);
    TimeBase timeBase() const { return timeBase_; }

    // The least height of each plot's drawing area (axis rect), in pixels; the plots' minimum
    // sizes add their legends, labels and margins (the layout learns them at the next replot).
    // kMinCurvesHeight and kMinPeaksHeight until set.
    void setMinimumPlotHeights(int curves, int peaks);
    QCustomPlot* curvePlot() const;
    QCustomPlot* peakPlot() const;
    int devicesOverLimit() const;
    // The sentence above the charts whenever a limit is set: "4 devices over the 40 GB limit:
    // 3, 7, 11, 15 (highest 52.3 GB on device 7)", or "All 32 devices are within the 40 GB
    // limit (…)"; against a card, "No limit set, and 8 devices over one card's 40 GB: …".
    // Empty with nothing to judge against.
    QString overLimitText() const;
    QLabel* overLimitLabel() const { return overLimitLabel_; }

    // The value both plots' y axes reach at least, in bytes, whatever this schedule's own
    // peak: two charts given the same floor draw equal bytes at equal heights, in one unit
    // (the compare window). 0, the default: each chart scales to its own peak and limit.
    // Takes effect at the next setMemory.
    void setScaleFloorBytes(double bytes) { scaleFloorBytes_ = bytes; }
    // The tallest value a chart of `result` shows: its highest curve point or peak, or the limit.
    static double tallestBytes(const SimResult& result, std::optional<double> limitBytes);

    // The curves as simulated (static + dynamic bytes, extended to the makespan), before
    // thinning; the graphs of curvePlot() hold them thinned to the visible range, in GB.
    const std::vector<std::vector<MemoryPoint>>& curves() const { return data_->curves; }
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
    void rebuildPeaks();
    void addLimitLine(QCustomPlot* plot);
    // The axis reaches the limit when it is within kLimitOnScale of the data, else fits the data.
    double axisTopBytes(double dataTopBytes) const;
    bool limitOffScale(double dataTopBytes) const;
    void updateOverLimitLabel();
    // Re-thins every curve for the visible range and the plot's pixel width, if either changed.
    void rethin(bool force = false);

    // After each layout of `plot`: device numbers thinned to the width.
    void fitToLayout(QCustomPlot* plot);
    void setDeviceTicks(int step);  // every step-th device number under the peaks

    // Devices named one by one in the legend, and in the over-limit sentence.
    static constexpr int kDeviceEntriesUpTo = 16;
    static constexpr int kOverLimitListed = 12;
    static constexpr int kDeviceTicksUpTo = 16;  // device numbers under the peaks, at most about

    QLabel* overLimitLabel_;
    QCustomPlot* curves_;
    QCustomPlot* peaks_;
    TimeBase timeBase_ = TimeBase::Milliseconds;

    std::shared_ptr<const MemoryChartData> data_ = std::make_shared<const MemoryChartData>();
    std::optional<double> limitBytes_;  // data_'s budget: the limit, or one card's memory
    double scaleFloorBytes_ = 0;
    double unitBytes_ = 1e9;
    QString unitName_ = QStringLiteral("GB");
    bool rangeFollowed_ = false;  // setTimeRange was called: the Gantt drives the x axis
    int peakDevices_ = 0;
    int deviceTickStep_ = 0;
    double thinnedLower_ = 0, thinnedUpper_ = 0;
    int thinnedWidth_ = -1;
};

}  // namespace mario::views
