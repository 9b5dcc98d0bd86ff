#include "views/MemoryChart.h"

#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <qcustomplot.h>
#include <tuple>
#include <utility>

#include "views/DeviceGradientLegendItem.h"
#include "views/MemoryThinning.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"
#include "views/TickSpacing.h"
#include "views/TimeAxis.h"

namespace mario::views {

namespace {

const QColor kWithinLimit(0x5B, 0x8D, 0xB8);
const QColor kOverLimit(0xD5, 0x5E, 0x00);  // Okabe–Ito vermilion: a warning without red-green
const QColor kLimitLine(0xB0, 0x30, 0x20);
// The limit's legend entry, by where the limit is: on the axis as a line, or above the scale.
const QString kLimitEntry = QStringLiteral("limitEntry");
const QString kLimitAboveScale = QStringLiteral("limitAboveScale");
// A limit more than this many times the tallest value is named above the axis, not drawn on it.
constexpr double kLimitOnScale = 3;

}  // namespace

MemoryChart::MemoryChart(QWidget* parent)
    : QWidget(parent), overLimitLabel_(new QLabel(this)), curves_(new QCustomPlot(this)),
      peaks_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    // On top, so the verdict is read before the curves and never scrolls out of sight.
    overLimitLabel_->setWordWrap(true);
    overLimitLabel_->setTextFormat(Qt::PlainText);
    overLimitLabel_->setContentsMargins(kPlotLeftMargin, 4, 8, 2);
    overLimitLabel_->setVisible(false);
    layout->addWidget(overLimitLabel_);
    layout->addWidget(curves_, 3);
    layout->addWidget(peaks_, 2);
    setupCurvePlot();
    setupPeakPlot();
    // Never squeezed below a readable plot: each axis rect keeps room for a few ticks (at
    // 1024×700 the peaks' was 35 px tall, its five labels overlapping).
    setMinimumPlotHeights(kMinCurvesHeight, kMinPeaksHeight);
    for (QCustomPlot* plot : {curves_, peaks_})
        connect(plot, &QCustomPlot::afterLayout, this, [this, plot] { fitToLayout(plot); });
}

void MemoryChart::setupCurvePlot() {
    applyPlotStyle(curves_);
    placeLegendOnTop(curves_, 16);
    // Legend entries are added where they help (few devices); QCustomPlot's automatic entry
    // scans the legend for every graph, quadratic in the devices.
    curves_->setAutoAddPlottableToLegend(false);
    applyTimeAxis(curves_->xAxis, timeBase_);
    // Thinning depends on the visible range and the width; re-thin just before drawing so
    // zoom, pan and resize all see a curve made for them.
    connect(curves_, &QCustomPlot::beforeReplot, this, [this] { rethin(); });
}

void MemoryChart::setupPeakPlot() {
    applyPlotStyle(peaks_);
    placeLegendOnTop(peaks_);
    peaks_->xAxis->setLabel(QStringLiteral("device"));
    peaks_->xAxis->grid()->setVisible(false);
    peaks_->xAxis->setSubTicks(false);
    peaks_->xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    peaks_->legend->setVisible(false);
}

void MemoryChart::setMinimumPlotHeights(int curves, int peaks) {
    curves_->axisRect()->setMinimumSize(0, curves);
    peaks_->axisRect()->setMinimumSize(0, peaks);
}

QCustomPlot* MemoryChart::curvePlot() const { return curves_; }
QCustomPlot* MemoryChart::peakPlot() const { return peaks_; }
int MemoryChart::devicesOverLimit() const { return data_->devicesOverBudget; }

void MemoryChart::setTimeBase(TimeBase base) {
    timeBase_ = base;
    applyTimeAxis(curves_->xAxis, base);
    curves_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryChart::setMemory(const SimResult& result, std::optional<double> limitBytes) {
    setMemory(std::make_shared<const MemoryChartData>(prepareMemoryChart(result, limitBytes, false)));
}

void MemoryChart::setMemory(const SimResult& result, const MemoryFit& fit) {
    setMemory(std::make_shared<const MemoryChartData>(prepareMemoryChart(result, fit)));
}

void MemoryChart::setMemory(std::shared_ptr<const MemoryChartData> data) {
    data_ = data ? std::move(data) : std::make_shared<const MemoryChartData>();
    limitBytes_ = data_->budgetBytes;
    const double dataTop = std::max(scaleFloorBytes_, data_->highestPeak);
    std::tie(unitBytes_, unitName_) = byteUnitFor(axisTopBytes(dataTop));
    curves_->yAxis->setLabel(QStringLiteral("memory (%1)").arg(unitName_));
    peaks_->yAxis->setLabel(QStringLiteral("peak (%1)").arg(unitName_));
    updateOverLimitLabel();
    rebuildCurves();
    rebuildPeaks();
    // At the next paint, with the rest of the window: drawn once whatever else changes now.
    curves_->replot(QCustomPlot::rpQueuedReplot);
    peaks_->replot(QCustomPlot::rpQueuedReplot);
}

double MemoryChart::tallestBytes(const SimResult& result, std::optional<double> limitBytes) {
    double top = limitBytes.value_or(0);
    for (const DeviceStats& device : result.devices) {
        top = std::max(top, device.peak_bytes);
        for (const MemoryPoint& p : device.memory) top = std::max(top, p.bytes);
    }
    return top;
}

void MemoryChart::rebuildCurves() {
    clearLegend(curves_->legend);  // the graphs' entries, and a gradient strip of the last plan
    curves_->clearGraphs();
    curves_->clearItems();
    const int devices = data_->deviceCount();
    for (int d : data_->drawn) {
        QCPGraph* graph = curves_->addGraph();
        graph->setLineStyle(QCPGraph::lsStepLeft);
        // Step lines are horizontal and vertical: crisper without antialiasing. Many devices
        // get 1-px lines, which skip QPainter's stroker (32 curves: 24 ms → 2 ms a redraw).
        graph->setPen(d >= 0 ? QPen(deviceColor(d, devices), devices > 8 ? 1 : 2) : QPen(QColor(0x33, 0x33, 0x33), 2));
        graph->setAntialiased(false);
        graph->setName(
            d >= 0
                ? QStringLiteral("device %1").arg(d)
                : QStringLiteral("highest of all %1 devices (the %2 fullest drawn)").arg(devices).arg(kFullestDrawn));
        graph->setAdaptiveSampling(false);  // we thin ourselves, keeping maxima
        if (devices <= kDeviceEntriesUpTo) graph->addToLegend(curves_->legend);
    }
    const double top = std::max(scaleFloorBytes_, data_->highestDrawn);
    // One legend entry per device while they fit on a line or two; beyond, one gradient strip
    // "device 0 … N−1" in the lines' colours. A hidden legend still counts in QCustomPlot's
    // minimum size, so its entries go too.
    if (devices > kDeviceEntriesUpTo) {
        clearLegend(curves_->legend);
        curves_->legend->addItem(new DeviceGradientLegendItem(curves_->legend, devices));
        if (!data_->envelope.empty()) curves_->graph(curves_->graphCount() - 1)->addToLegend(curves_->legend);
    }
    if (devices == 0) clearLegend(curves_->legend);
    curves_->legend->setVisible(devices > 0);
    curves_->yAxis->setRange(0, std::max(axisTopBytes(top) / unitBytes_ * 1.1, 1e-9));
    if (!rangeFollowed_) {
        const double span = data_->makespan > 0 ? data_->makespan : 1.0;
        curves_->xAxis->setRange(-0.01 * span, 1.01 * span);
    }
    if (limitBytes_) addLimitLine(curves_);
    rethin(true);
}

QString MemoryChart::overLimitText() const { return overLimitLabel_->isHidden() ? QString() : overLimitLabel_->text(); }

void MemoryChart::updateOverLimitLabel() {
    const MemoryChartData& data = *data_;
    if (!limitBytes_ || data.peaks.empty()) {
        overLimitLabel_->clear();
        overLimitLabel_->setVisible(false);
        return;
    }
    const auto [limitUnit, limitName] = byteUnitFor(*limitBytes_);  // "40 GB" beside a chart in MB
    const QString limit = QStringLiteral("%1 %2").arg(*limitBytes_ / limitUnit, 0, 'g', 4).arg(limitName);
    QStringList over;
    for (int d : data.overBudget) over << QString::number(d);
    // Past a dozen the list stops helping; the red bars show the rest.
    if (over.size() > kOverLimitListed) over.back() = QStringLiteral("\u2026");
    const QString peak = QStringLiteral("highest %1 %2 on device %3")
                             .arg(data.highestPeak / unitBytes_, 0, 'g', 4)
                             .arg(unitName_)
                             .arg(data.fullestDevice);
    const int devices = data.deviceCount();
    const bool card = data.budgetIsCard;
    // Without a limit the budget is one card: say so, since the passes did not aim at it.
    const QString budget = QString::fromStdString(
        budgetPhrase(card ? MemoryFit::Basis::Card : MemoryFit::Basis::Limit, limit.toStdString()));
    const int overLimit = data.devicesOverBudget;
    if (overLimit > 0) {
        overLimitLabel_->setText(QStringLiteral("%1%2 %3 over %4: %5 (%6)")
                                     .arg(card ? QStringLiteral("No limit set, and ") : QString())
                                     .arg(overLimit)
                                     .arg(overLimit == 1 ? QStringLiteral("device") : QStringLiteral("devices"))
                                     .arg(budget, over.join(QStringLiteral(", ")), peak));
        overLimitLabel_->setStyleSheet(QStringLiteral("color: #B03020; font-weight: bold;"));
    } else if (card) {
        overLimitLabel_->setText(QStringLiteral("No limit set; %1 %2 (%3)")
                                     .arg(devices == 1 ? QStringLiteral("the device fits")
                                                       : QStringLiteral("all %1 devices fit").arg(devices),
                                          budget, peak));
        overLimitLabel_->setStyleSheet(QStringLiteral("color: #404040;"));
    } else {
        overLimitLabel_->setText(
            QStringLiteral("%1 within %2 (%3)")
                .arg(devices == 1 ? QStringLiteral("The device is") : QStringLiteral("All %1 devices are").arg(devices),
                     budget, peak));
        overLimitLabel_->setStyleSheet(QStringLiteral("color: #404040;"));
    }
    overLimitLabel_->setVisible(true);
}

void MemoryChart::rebuildPeaks() {
    const MemoryChartData& data = *data_;
    peaks_->clearPlottables();
    peaks_->clearItems();
    auto* within = new QCPBars(peaks_->xAxis, peaks_->yAxis);
    auto* over = new QCPBars(peaks_->xAxis, peaks_->yAxis);
    within->setName(!limitBytes_        ? QStringLiteral("peak")
                    : data.budgetIsCard ? QStringLiteral("within one card")
                                        : QStringLiteral("within limit"));
    over->setName(data.budgetIsCard ? QStringLiteral("over one card") : QStringLiteral("over limit"));
    // Thousands of devices make bars narrower than a pixel, which QCustomPlot would not draw:
    // then they touch, each outlined at least one pixel wide in its own colour. Past
    // kBarsUpTo devices a bar stands for a run of neighbours, at their highest peak.
    const int devices = data.deviceCount();
    const int per = data.devicesPerBar;
    const bool crowded = devices > kCurvesUpTo * 4;
    for (auto* bars : {within, over}) bars->setWidth(crowded ? per : 0.7);
    within->setBrush(kWithinLimit);
    over->setBrush(kOverLimit);
    within->setPen(crowded ? QPen(kWithinLimit, 0) : QPen(Qt::NoPen));
    over->setPen(crowded ? QPen(kOverLimit, 0) : QPen(Qt::NoPen));
    for (int bar = 0; bar < static_cast<int>(data.barPeaks.size()); ++bar) {
        const double peak = data.barPeaks[static_cast<std::size_t>(bar)];
        const double key = per == 1 ? bar : bar * per + (std::min(per, devices - bar * per) - 1) / 2.0;
        (limitBytes_ && peak > *limitBytes_ ? over : within)->addData(key, peak / unitBytes_);
    }
    const double top = std::max(scaleFloorBytes_, data.highestPeak);
    // Two series, not one per device: the legend explains the warning colour once. Without a
    // limit there is no colour to explain, and no entry: a hidden legend's entries still take
    // their height in QCustomPlot's layout (25 px of a small window).
    clearLegend(peaks_->legend);
    if (limitBytes_ && within->dataCount() > 0) within->addToLegend(peaks_->legend);
    if (limitBytes_ && over->dataCount() > 0) over->addToLegend(peaks_->legend);
    peaks_->legend->setVisible(limitBytes_.has_value());

    peakDevices_ = devices;
    setDeviceTicks(std::max(1, devices / kDeviceTicksUpTo));  // refitted to the width once laid out
    peaks_->xAxis->setRange(-0.6, std::max(devices, 1) - 0.4);
    peaks_->yAxis->setRange(0, std::max(axisTopBytes(top) / unitBytes_ * 1.15, 1e-9));
    if (limitBytes_) addLimitLine(peaks_);
}

double MemoryChart::axisTopBytes(double dataTopBytes) const {
    if (!limitBytes_ || limitOffScale(dataTopBytes)) return dataTopBytes;
    return std::max(dataTopBytes, *limitBytes_);
}

bool MemoryChart::limitOffScale(double dataTopBytes) const {
    return limitBytes_ && dataTopBytes > 0 && *limitBytes_ > kLimitOnScale * dataTopBytes;
}

void MemoryChart::addLimitLine(QCustomPlot* plot) {
    const QPen pen(kLimitLine, 1.5, Qt::DashLine);
    // Far above the data (a CPU model's megabytes against a 40 GB card): the axis fits the
    // data and no line is drawn, rather than flattening every curve under it; the legend says
    // where the limit is, in its own unit ("40 GB" beside curves in MB). On the scale, in the
    // axis's unit.
    const bool above = *limitBytes_ / unitBytes_ > plot->yAxis->range().upper;
    const auto [limitUnit, limitName] = above ? byteUnitFor(*limitBytes_) : std::pair(unitBytes_, unitName_);
    QString name = QStringLiteral("%1 %2 %3")
                       .arg(data_->budgetIsCard ? QStringLiteral("one card") : QStringLiteral("limit"))
                       .arg(*limitBytes_ / limitUnit, 0, 'g', 4)
                       .arg(limitName);
    if (above) {
        name += QStringLiteral(", above the scale ↑");
    } else {
        auto* line = new QCPItemStraightLine(plot);
        line->setPen(pen);
        line->point1->setCoords(0, *limitBytes_ / unitBytes_);
        line->point2->setCoords(1, *limitBytes_ / unitBytes_);
    }
    // Named in the legend row above the plot, never by text inside it: a label on the line
    // covered the curves and bars it crossed (issue 39), whatever its background.
    auto* entry = new SwatchLegendItem(plot->legend, above ? QPen(kLimitLine, 1.5, Qt::DotLine) : pen, name);
    entry->setObjectName(above ? kLimitAboveScale : kLimitEntry);
    plot->legend->addItem(entry);
}

void MemoryChart::setDeviceTicks(int step) {
    deviceTickStep_ = step;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int d = 0; d < peakDevices_; d += step) ticker->addTick(d, QString::number(d));
    peaks_->xAxis->setTicker(ticker);
}

void MemoryChart::fitToLayout(QCustomPlot* plot) {
    // Device numbers: every step-th, where step is the least of 1, 2, 4, 5, 8, 10, 20, … that
    // keeps the widest number and two spaces apart (and never more than kDeviceTicksUpTo).
    if (plot == peaks_ && peakDevices_ > 0 && peaks_->axisRect()->width() > 0) {
        const QFontMetrics metrics(peaks_->xAxis->tickLabelFont());
        const double room = metrics.horizontalAdvance(QString::number(peakDevices_ - 1) + QStringLiteral("  "));
        const double perDevice = peaks_->axisRect()->width() / peaks_->xAxis->range().size();
        const int needed =
            std::max({1, static_cast<int>(std::ceil(room / perDevice)), peakDevices_ / kDeviceTicksUpTo});
        int step = 0;
        for (int scale = 1; step == 0; scale *= 10)
            for (int m : {1, 2, 4, 5, 8})
                if (step == 0 && m * scale >= needed) step = m * scale;
        if (step != deviceTickStep_) {
            setDeviceTicks(step);
            relayout(peaks_);
        }
    }
}

void MemoryChart::rethin(bool force) {
    const QCPRange range = curves_->xAxis->range();
    const int width = std::max(curves_->width(), 1);
    if (!force && range.lower == thinnedLower_ && range.upper == thinnedUpper_ && width == thinnedWidth_) return;
    thinnedLower_ = range.lower;
    thinnedUpper_ = range.upper;
    thinnedWidth_ = width;
    for (int g = 0; g < curves_->graphCount() && g < static_cast<int>(data_->drawn.size()); ++g) {
        const auto thinned = thinKeepingMax(data_->curveOf(g), range.lower, range.upper, width);
        QVector<double> keys, values;
        keys.reserve(static_cast<qsizetype>(thinned.size()));
        values.reserve(static_cast<qsizetype>(thinned.size()));
        for (const MemoryPoint& p : thinned) {
            keys.append(p.time_ms);
            values.append(p.bytes / unitBytes_);
        }
        curves_->graph(g)->setData(keys, values, true);
    }
}

void MemoryChart::setTimeRange(double lower, double upper) {
    if (!(upper > lower)) return;
    rangeFollowed_ = true;
    curves_->xAxis->setRange(lower, upper);
    curves_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace mario::views
