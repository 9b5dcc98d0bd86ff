#include "views/WhatIfChart.h"

#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"

namespace mario::views {

namespace {

// Okabe–Ito, one colour per scheme (distinguishable with every common colour-vision
// deficiency); pass sets differ by dash, so a scheme's lines read as one family.
const QColor kSchemeColors[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                                QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0x99, 0x99, 0x99),
                                QColor(0x00, 0x00, 0x00)};
const Qt::PenStyle kPassSetDashes[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
const QColor kLimitLine(0xB0, 0x30, 0x20);  // as the memory chart's limit
const QColor kLargest(0xD5, 0x5E, 0x00);
const QColor kRefused(0x80, 0x80, 0x80);

}  // namespace

WhatIfChart::WhatIfChart(QWidget* parent)
    : QWidget(parent), message_(new QLabel(this)), slice_(new QLabel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    message_->setWordWrap(true);
    message_->setContentsMargins(kPlotLeftMargin, 4, 8, 4);
    slice_->setContentsMargins(kPlotLeftMargin, 2, 8, 2);
    slice_->hide();
    layout->addWidget(message_);
    layout->addWidget(slice_);
    for (int i = 0; i < 3; ++i) {
        QCustomPlot* plot = plots_[i] = new QCustomPlot(this);
        applyPlotStyle(plot);
        if (i != 1) {
            placeLegendOnTop(plot, 6);
            // From the left edge, not the axis: a dock is narrow, and the lines' names want
            // two or three to a row rather than one.
            plot->legend->setMargins(QMargins(8, 4, 8, 0));
        }
        plot->axisRect()->setMinimumSize(0, 70);
        plot->setMouseTracking(true);
        plot->installEventFilter(this);
        layout->addWidget(plot, i == 0 ? 3 : 2);
    }
    clear(tr("Choose a knob and its values, then Run: each line is a scheme and pass set."));
}

void WhatIfChart::clear(const QString& message) {
    lines_ = {};
    message_->setText(message);
    message_->setVisible(!message.isEmpty());
    slice_->hide();
    for (QCustomPlot* plot : plots_) {
        plot->clearGraphs();
        plot->clearItems();
        clearLegend(plot->legend);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

QString WhatIfChart::messageText() const { return message_->isHidden() ? QString() : message_->text(); }

void WhatIfChart::setLines(WhatIfLines lines) {
    lines_ = std::move(lines);
    message_->hide();
    slice_->setText(tr("at %1").arg(lines_.sliceText));
    slice_->setVisible(!lines_.sliceText.isEmpty());
    rebuild();
}

void WhatIfChart::setTopMetric(SweepMetric metric) {
    if (metric != SweepMetric::Throughput && metric != SweepMetric::Step) return;
    topMetric_ = metric;
    if (!lines_.empty()) rebuild();
}

SweepMetric WhatIfChart::metricOf(const QCustomPlot* plot) const {
    return plot == plots_[0] ? topMetric_ : plot == plots_[1] ? SweepMetric::Mfu : SweepMetric::Peak;
}

std::optional<double> WhatIfChart::valueOf(int pointIndex, SweepMetric metric) const {
    const auto value = metricValue(lines_.point(pointIndex), metric);
    if (!value) return std::nullopt;
    // In the plot's units: GB (or MB, KB) of memory, seconds or milliseconds of step.
    if (metric == SweepMetric::Peak) return *value / peakUnit_;
    if (metric == SweepMetric::Step) return *value / stepUnit_;
    return value;
}

void WhatIfChart::rebuild() {
    if (lines_.empty()) return clear(tr("The sweep has no points to draw."));
    double tallest = lines_.limitBytes.value_or(0), longest = 0;
    for (const SweepPoint& point : lines_.result->points)
        if (point.ok()) {
            tallest = std::max(tallest, point.peak_bytes);
            longest = std::max(longest, point.step_ms);
        }
    peakUnit_ = byteUnitFor(tallest).first;
    const bool units = !lines_.result->points.empty() && lines_.result->points.front().unit_costs;
    stepUnit_ = !units && longest >= 1000 ? 1000 : 1;
    // Unit-cost sweeps have no samples/s: their top chart is the step.
    if (units && topMetric_ == SweepMetric::Throughput) topMetric_ = SweepMetric::Step;
    for (QCustomPlot* plot : plots_) rebuildPlot(plot, metricOf(plot));
}

double WhatIfChart::footOf(const QCustomPlot* plot) const {
    const QCPRange range = plot->yAxis->range();
    return range.lower + 0.04 * range.size();
}

void WhatIfChart::rebuildPlot(QCustomPlot* plot, SweepMetric metric) {
    plot->clearGraphs();
    plot->clearItems();
    clearLegend(plot->legend);
    plot->setAutoAddPlottableToLegend(false);
    const bool units = lines_.result->points.front().unit_costs;
    switch (metric) {
        case SweepMetric::Throughput: plot->yAxis->setLabel(tr("samples/s")); break;
        case SweepMetric::Step:
            plot->yAxis->setLabel(units ? tr("step (units)") : stepUnit_ > 1 ? tr("step (s)") : tr("step (ms)"));
            break;
        case SweepMetric::Mfu: plot->yAxis->setLabel(tr("MFU (%)")); break;
        case SweepMetric::Peak: plot->yAxis->setLabel(tr("peak (%1)").arg(byteUnitFor(peakUnit_).second)); break;
    }
    plot->xAxis->setLabel(plot == plots_[2] ? lines_.knob : QString());

    // x: the values, on a log axis for a wide ladder, or the words at 0, 1, …
    const auto [lowX, highX] = std::minmax_element(lines_.x.begin(), lines_.x.end());
    if (!lines_.xLabels.isEmpty() && lines_.result->spec.knobs[0].knob->kind == SweepKnob::Kind::Word) {
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (int i = 0; i < lines_.xLabels.size(); ++i) ticker->addTick(i, lines_.xLabels[i]);
        plot->xAxis->setTicker(ticker);
        plot->xAxis->setScaleType(QCPAxis::stLinear);
        plot->xAxis->setRange(-0.5, lines_.xLabels.size() - 0.5);
    } else if (lines_.logX) {
        auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
        ticker->setLogBase(2);
        ticker->setSubTickCount(0);
        plot->xAxis->setTicker(ticker);
        plot->xAxis->setNumberFormat("g");
        plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
        plot->xAxis->setRange(*lowX / 1.25, *highX * 1.25);
    } else {
        plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        plot->xAxis->setScaleType(QCPAxis::stLinear);
        const double pad = std::max(0.05 * (*highX - *lowX), 0.5);
        plot->xAxis->setRange(*lowX - pad, *highX + pad);
    }

    double top = 0;
    QCPGraph* largest = nullptr;
    for (int l = 0; l < static_cast<int>(lines_.lines.size()); ++l) {
        const WhatIfLine& line = lines_.lines[static_cast<std::size_t>(l)];
        QCPGraph* graph = plot->addGraph();
        const QColor color = kSchemeColors[line.scheme % std::size(kSchemeColors)];
        graph->setPen(QPen(color, 2, kPassSetDashes[line.passSet % std::size(kPassSetDashes)]));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 6));
        graph->setName(line.label);
        graph->setAdaptiveSampling(false);
        // A refused point is NaN: QCustomPlot breaks the line there, so the gap is visible.
        for (std::size_t x = 0; x < line.points.size(); ++x) {
            const auto value = valueOf(line.points[x], metric);
            graph->addData(lines_.x[x], value ? *value : qQNaN());
            if (value) top = std::max(top, *value);
        }
        if (plot == plots_[0]) graph->addToLegend(plot->legend);  // the lines named once, on top
    }
    if (metric == SweepMetric::Peak && lines_.limitBytes) top = std::max(top, *lines_.limitBytes / peakUnit_);
    plot->yAxis->setRange(0, top > 0 ? top * 1.12 : 1);

    // The largest value that fits, ringed on every chart where its point has a value.
    for (const WhatIfLine& line : lines_.lines) {
        if (!line.largestFitting) continue;
        const auto value = valueOf(line.points[static_cast<std::size_t>(*line.largestFitting)], metric);
        if (!value) continue;
        if (!largest) {
            largest = plot->addGraph();
            largest->setLineStyle(QCPGraph::lsNone);
            largest->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kLargest, 2.5), Qt::NoBrush, 15));
            largest->setName(tr("largest that fits"));
            if (plot == plots_[0]) largest->addToLegend(plot->legend);
        }
        largest->addData(lines_.x[static_cast<std::size_t>(*line.largestFitting)], *value);
    }
    // Refused points: a cross at the foot, where hovering says why.
    QCPGraph* refused = nullptr;
    for (const WhatIfLine& line : lines_.lines)
        for (std::size_t x = 0; x < line.points.size(); ++x) {
            if (lines_.point(line.points[x]).ok()) continue;
            if (!refused) {
                refused = plot->addGraph();
                refused->setLineStyle(QCPGraph::lsNone);
                refused->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kRefused, 2), Qt::NoBrush, 9));
                refused->setName(tr("refused (hover for why)"));
                if (plot == plots_[0]) refused->addToLegend(plot->legend);
            }
            refused->addData(lines_.x[x], footOf(plot));
        }
    if (metric == SweepMetric::Peak && lines_.limitBytes) {
        // The budget every point was judged against, named in the legend as on the memory chart.
        const double limit = *lines_.limitBytes / peakUnit_;
        const QPen pen(kLimitLine, 1.5, Qt::DashLine);
        auto* line = new QCPItemStraightLine(plot);
        line->setPen(pen);
        line->point1->setCoords(0, limit);
        line->point2->setCoords(1, limit);
        const bool card = !lines_.result->spec.base.memory_limit_bytes;
        auto* entry = new SwatchLegendItem(plot->legend, pen,
                                           tr("%1 %2 %3")
                                               .arg(card ? tr("one card") : tr("limit"))
                                               .arg(limit, 0, 'g', 4)
                                               .arg(byteUnitFor(peakUnit_).second));
        entry->setObjectName("limitEntry");
        plot->legend->addItem(entry);
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

std::optional<QPointF> WhatIfChart::pointPixel(const QCustomPlot* plot, int line, int x) const {
    if (lines_.empty() || line < 0 || line >= static_cast<int>(lines_.lines.size()) || x < 0 ||
        x >= static_cast<int>(lines_.x.size()))
        return std::nullopt;
    const int index = lines_.lines[static_cast<std::size_t>(line)].points[static_cast<std::size_t>(x)];
    const auto value = valueOf(index, metricOf(plot));
    if (!value && lines_.point(index).ok()) return std::nullopt;
    const double px = plot->xAxis->coordToPixel(lines_.x[static_cast<std::size_t>(x)]);
    return QPointF(px, plot->yAxis->coordToPixel(value ? *value : footOf(plot)));
}

int WhatIfChart::pointAt(const QCustomPlot* plot, QPointF pixel) const {
    int best = -1;
    double bestDistance = kHitPixels;
    for (int l = 0; l < static_cast<int>(lines_.lines.size()); ++l)
        for (int x = 0; x < static_cast<int>(lines_.x.size()); ++x)
            if (const auto at = pointPixel(plot, l, x)) {
                const double distance = std::hypot(at->x() - pixel.x(), at->y() - pixel.y());
                if (distance <= bestDistance) {
                    bestDistance = distance;
                    best = lines_.lines[static_cast<std::size_t>(l)].points[static_cast<std::size_t>(x)];
                }
            }
    return best;
}

QString WhatIfChart::describe(int pointIndex) const {
    for (const WhatIfLine& line : lines_.lines)
        for (std::size_t x = 0; x < line.points.size(); ++x)
            if (line.points[x] == pointIndex)
                return describePoint(lines_.point(pointIndex), line.label, lines_.knob, lines_.xLabels[int(x)]);
    return {};
}

bool WhatIfChart::eventFilter(QObject* watched, QEvent* event) {
    auto* plot = qobject_cast<QCustomPlot*>(watched);
    if (!plot || lines_.empty()) return QWidget::eventFilter(watched, event);
    if (event->type() == QEvent::MouseMove || event->type() == QEvent::ToolTip) {
        const QPointF at = event->type() == QEvent::ToolTip ? QPointF(static_cast<QHelpEvent*>(event)->pos())
                                                            : static_cast<QMouseEvent*>(event)->position();
        const int index = pointAt(plot, at);
        if (index >= 0) QToolTip::showText(plot->mapToGlobal(at.toPoint()), describe(index), plot);
        else QToolTip::hideText();
        plot->setCursor(index >= 0 && lines_.point(index).ok() ? Qt::PointingHandCursor : Qt::ArrowCursor);
        return event->type() == QEvent::ToolTip;
    }
    if (event->type() == QEvent::MouseButtonPress) {
        auto* mouse = static_cast<QMouseEvent*>(event);
        const int index = mouse->button() == Qt::LeftButton ? pointAt(plot, mouse->position()) : -1;
        if (index >= 0 && lines_.point(index).ok()) {
            emit pointClicked(index);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace mario::views
