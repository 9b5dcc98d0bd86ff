#pragma once
// A time axis that labels its ticks in the unit the visible span asks for (views/TimeBase.h):
// zoomed out over a 150 s step it reads "0 … 150" with the label "time (s)", zoomed into one
// box "0 … 800" with "time (µs)". The plot keeps its coordinates in the time base
// (milliseconds or units) throughout: only the labels change, so hit testing, ranges, the
// memory chart's shared axis and saved ranges never convert anything.
#include <qcustomplot.h>

#include "views/TimeBase.h"

namespace mario::views {

class TimeAxisTicker : public QCPAxisTicker {
public:
    explicit TimeAxisTicker(TimeBase base = TimeBase::Milliseconds) : base_(base) {}

    void setTimeBase(TimeBase base) { base_ = base; }
    TimeBase timeBase() const { return base_; }
    // The unit of the last generated ticks (that of the range the axis last drew).
    const TimeUnit& unit() const { return unit_; }

    void generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision, QVector<double>& ticks,
                  QVector<double>* subTicks, QVector<QString>* tickLabels) override;

protected:
    // The step is chosen among 1, 2, 2.5, 5 × 10^k of the display unit, so minutes step by
    // whole or half minutes rather than by 50 000 ms.
    double getTickStep(const QCPRange& range) override;
    int getSubTickCount(double tickStep) override;
    // Fixed notation with as many decimals as the step needs: "1.25", never "1.25e+03".
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;

private:
    TimeBase base_;
    TimeUnit unit_;
    int decimals_ = 0;
};

// Gives `axis` a TimeAxisTicker for `base` and keeps its label ("time (s)", "time (units)")
// in step with the unit as the range changes. Calling it again only changes the base; the
// axis is replotted by its owner. GanttView and MemoryChart call it on their time axes.
void applyTimeAxis(QCPAxis* axis, TimeBase base);

// The ticker applyTimeAxis installed on `axis`, or nullptr.
TimeAxisTicker* timeAxisTicker(const QCPAxis* axis);

}  // namespace mario::views
