#include "views/TunerCurveChart.h"

#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

#include "views/PlotStyle.h"

namespace mario::views {

namespace {

const QColor kCurve(0x00, 0x72, 0xB2);  // Okabe–Ito blue, as the Pareto chart's "with checkpointing"

// Pinned to the axis rect (not to data), so it stays put while the axes rescale.
QCPItemText* rectText(QCustomPlot* plot, double x, double y, Qt::Alignment alignment) {
    auto* text = new QCPItemText(plot);
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setAxisRect(plot->axisRect());
    text->position->setCoords(x, y);
    text->setPositionAlignment(alignment);
    text->setPadding(QMargins(4, 2, 4, 2));
    text->setClipToAxisRect(true);
    return text;
}

}  // namespace

TunerCurveChart::TunerCurveChart(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    applyPlotStyle(plot_);
    // Side by side with the Pareto chart there is no Gantt to line up with: a narrower
    // margin leaves the room to the curve.
    plot_->axisRect()->setMinimumMargins(QMargins(64, 8, 16, 8));
    plot_->xAxis->setLabel(tr("candidates evaluated"));
    plot_->yAxis->setLabel(tr("best samples/s so far"));
    plot_->setMinimumSize(260, 180);

    graph_ = plot_->addGraph();
    // A step: the best so far holds until the candidate that beats it.
    graph_->setLineStyle(QCPGraph::lsStepLeft);
    graph_->setPen(QPen(kCurve, 2));
    QColor fill = kCurve;
    fill.setAlpha(28);
    graph_->setBrush(fill);

    caption_ = rectText(plot_, 0.02, 0.03, Qt::AlignLeft | Qt::AlignTop);
    caption_->setColor(QColor(0x30, 0x30, 0x30));
    caption_->setBrush(QColor(255, 255, 255, 220));
    empty_ = rectText(plot_, 0.5, 0.5, Qt::AlignCenter);
    empty_->setColor(QColor(0x80, 0x80, 0x80));
    empty_->setText(tr("Run the tuner: the best throughput found so far grows here."));
    clear();
}

void TunerCurveChart::clear(int total) {
    total_ = std::max(total, 0);
    points_.clear();
    rebuild();
}

void TunerCurveChart::addPoint(int evaluated, double bestSamplesPerS) {
    const QPointF point(evaluated, bestSamplesPerS);
    if (!points_.isEmpty() && evaluated < points_.back().x()) return;  // stale: never draw backwards
    total_ = std::max(total_, evaluated);  // refining the best adds evaluations past the space
    // A plateau only needs its two ends; progress arrives many times a second and long
    // searches would otherwise keep thousands of identical points.
    const qsizetype n = points_.size();
    if (n >= 2 && points_[n - 1].y() == bestSamplesPerS && points_[n - 2].y() == bestSamplesPerS)
        points_.back() = point;
    else if (n >= 1 && points_[n - 1].x() == evaluated) points_.back() = point;
    else points_.append(point);
    rebuild();
}

std::optional<QPointF> TunerCurveChart::lastPoint() const {
    if (points_.isEmpty()) return std::nullopt;
    return points_.back();
}

void TunerCurveChart::rebuild() {
    QVector<double> keys, values;
    keys.reserve(points_.size());
    values.reserve(points_.size());
    double top = 0;
    for (const QPointF& p : points_) {
        keys.append(p.x());
        values.append(p.y());
        top = std::max(top, p.y());
    }
    graph_->setData(keys, values, true);
    const double right = std::max<double>(total_, points_.isEmpty() ? 1.0 : points_.back().x());
    // A little past the end, so that a last-moment improvement is not hidden in the frame.
    plot_->xAxis->setRange(0, std::max(right, 1.0) * 1.03);
    plot_->yAxis->setRange(0, top > 0 ? top * 1.18 : 1.0);
    empty_->setVisible(points_.isEmpty());
    const double best = points_.isEmpty() ? 0.0 : points_.back().y();
    caption_->setVisible(!points_.isEmpty());
    const QString of = total_ > 0 ? tr(" of %1").arg(total_) : QString();
    const int evaluated = points_.isEmpty() ? 0 : static_cast<int>(points_.back().x());
    if (best <= 0) caption_->setText(tr("nothing fits yet · %1%2 candidates evaluated").arg(evaluated).arg(of));
    else
        caption_->setText(tr("best %1 samples/s · %2%3 candidates evaluated")
                              .arg(best, 0, 'f', best < 10 ? 2 : 1)
                              .arg(evaluated)
                              .arg(of));
    // Queued: a burst of progress updates becomes one repaint.
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace mario::views
