#include "views/TimeAxis.h"

#include <algorithm>
#include <cmath>

namespace mario::views {

void TimeAxisTicker::generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision,
                              QVector<double>& ticks, QVector<double>* subTicks, QVector<QString>* tickLabels) {
    unit_ = timeUnitForSpan(range.size(), base_);
    // Decimals follow the step in the display unit: a 0.25 s step needs two, a 50 s step none.
    const double step = getTickStep(range) / unit_.per;
    decimals_ =
        step > 0 && std::isfinite(step) ? std::clamp(-static_cast<int>(std::floor(std::log10(step) + 1e-9)), 0, 9) : 0;
    // A step of 2.5 shows one more decimal than its magnitude says.
    if (step > 0 && std::abs(step * std::pow(10.0, decimals_) - std::round(step * std::pow(10.0, decimals_))) > 1e-6)
        ++decimals_;
    QCPAxisTicker::generate(range, locale, formatChar, precision, ticks, subTicks, tickLabels);
}

double TimeAxisTicker::getTickStep(const QCPRange& range) {
    return QCPAxisTicker::getTickStep(QCPRange(range.lower / unit_.per, range.upper / unit_.per)) * unit_.per;
}

int TimeAxisTicker::getSubTickCount(double tickStep) { return QCPAxisTicker::getSubTickCount(tickStep / unit_.per); }

QString TimeAxisTicker::getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) {
    Q_UNUSED(formatChar)
    Q_UNUSED(precision)
    const double value = tick / unit_.per;
    // A tick at −1e-13 from rounding must not read "-0".
    QString text = locale.toString(std::abs(value) < 1e-9 ? 0.0 : value, 'f', decimals_);
    text.remove(locale.groupSeparator());
    return text;
}

namespace {

// Lives as a child of the axis, so the connection ends with it and a second applyTimeAxis
// finds it instead of connecting twice.
class TimeAxisLabeler : public QObject {
public:
    TimeAxisLabeler(QCPAxis* axis, QSharedPointer<TimeAxisTicker> ticker)
        : QObject(axis), axis_(axis), ticker_(std::move(ticker)) {
        setObjectName(QStringLiteral("mario-time-axis"));
        connect(axis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] { update(); });
    }
    TimeAxisTicker* ticker() const { return ticker_.data(); }
    void update() { axis_->setLabel(timeAxisLabel(timeUnitForSpan(axis_->range().size(), ticker_->timeBase()))); }

private:
    QCPAxis* axis_;
    QSharedPointer<TimeAxisTicker> ticker_;
};

TimeAxisLabeler* labelerOf(const QCPAxis* axis) {
    // By name: the class has no meta-object of its own for findChild<T> to tell it apart by,
    // and no one else names a child of an axis so.
    return static_cast<TimeAxisLabeler*>(
        axis->findChild<QObject*>(QStringLiteral("mario-time-axis"), Qt::FindDirectChildrenOnly));
}

}  // namespace

void applyTimeAxis(QCPAxis* axis, TimeBase base) {
    if (!axis) return;
    TimeAxisLabeler* labeler = labelerOf(axis);
    if (!labeler || axis->ticker().data() != labeler->ticker()) {
        delete labeler;  // someone replaced the ticker since: start over
        auto ticker = QSharedPointer<TimeAxisTicker>::create(base);
        axis->setTicker(ticker);
        labeler = new TimeAxisLabeler(axis, ticker);
    }
    labeler->ticker()->setTimeBase(base);
    labeler->update();
}

TimeAxisTicker* timeAxisTicker(const QCPAxis* axis) {
    const TimeAxisLabeler* labeler = axis ? labelerOf(axis) : nullptr;
    return labeler && axis->ticker().data() == labeler->ticker() ? labeler->ticker() : nullptr;
}

}  // namespace mario::views
