#include "views/ParetoChart.h"

#include <QVBoxLayout>
#include <algorithm>
#include <numeric>
#include <qcustomplot.h>

#include "views/PlotStyle.h"

namespace mario::views {

namespace {

// Okabe–Ito: distinguishable with every common colour-vision deficiency.
const QColor kPlain(0xE6, 0x9F, 0x00);       // orange: no checkpointing
const QColor kCheckpoint(0x00, 0x72, 0xB2);  // blue: Mario checkpointing
const QColor kFront(0x33, 0x33, 0x33);
const QColor kLimitLine(0xB0, 0x30, 0x20);  // as the memory chart's limit
const QColor kSelected(0xD5, 0x5E, 0x00);

constexpr double kGB = 1e9;

QCPGraph* scatterGraph(QCustomPlot* plot, const QColor& color, QCPScatterStyle::ScatterShape shape,
                       const QString& name) {
    QCPGraph* graph = plot->addGraph();
    graph->setLineStyle(QCPGraph::lsNone);
    QColor fill = color;
    fill.setAlpha(150);
    graph->setScatterStyle(QCPScatterStyle(shape, color.darker(115), fill, 7));
    graph->setName(name);
    graph->setAdaptiveSampling(false);  // every dot is a candidate someone may click
    return graph;
}

}  // namespace

ParetoChart::ParetoChart(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    applyPlotStyle(plot_);
    placeLegendOnTop(plot_);
    plot_->legend->setMargins(QMargins(64, 4, 8, 0));
    plot_->axisRect()->setMinimumMargins(QMargins(64, 8, 16, 8));
    plot_->xAxis->setLabel(tr("peak memory of the fullest device (GB)"));
    plot_->yAxis->setLabel(tr("throughput (samples/s)"));
    plot_->setMinimumSize(260, 180);

    plain_ = scatterGraph(plot_, kPlain, QCPScatterStyle::ssCircle, tr("no checkpointing"));
    checkpoint_ = scatterGraph(plot_, kCheckpoint, QCPScatterStyle::ssDiamond, tr("Mario checkpointing"));
    // Ascending memory, rising throughput: the value of a point holds until the next one,
    // which is what "the best any budget up to x buys" looks like.
    front_line_ = plot_->addGraph();
    front_line_->setName(tr("Pareto front"));
    front_line_->setLineStyle(QCPGraph::lsStepLeft);
    front_line_->setPen(QPen(kFront, 1.5));
    ring_ = plot_->addGraph();
    ring_->setLineStyle(QCPGraph::lsNone);
    ring_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kSelected, 2.5), Qt::NoBrush, 15));
    ring_->removeFromLegend();

    ringAnchor_ = new QCPItemTracer(plot_);
    ringAnchor_->setStyle(QCPItemTracer::tsNone);
    ringAnchor_->setSelectable(false);
    ringLabel_ = new QCPItemText(plot_);
    ringLabel_->position->setParentAnchor(ringAnchor_->position);
    ringLabel_->setColor(kSelected.darker(130));
    ringLabel_->setBrush(QColor(255, 255, 255, 225));
    ringLabel_->setPadding(QMargins(4, 1, 4, 1));
    ringLabel_->setClipToAxisRect(true);
    limitLine_ = new QCPItemStraightLine(plot_);
    limitLine_->setPen(QPen(kLimitLine, 1.5, Qt::DashLine));
    limitLabel_ = new QCPItemText(plot_);
    limitLabel_->position->setAxes(plot_->xAxis, plot_->yAxis);
    limitLabel_->position->setTypeX(QCPItemPosition::ptPlotCoords);
    limitLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    limitLabel_->position->setAxisRect(plot_->axisRect());
    // At the bottom: the top holds the best candidates and the Pareto front's last step.
    limitLabel_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    limitLabel_->setColor(kLimitLine);
    limitLabel_->setBrush(QColor(255, 255, 255, 220));
    limitLabel_->setPadding(QMargins(3, 1, 3, 1));
    empty_ = new QCPItemText(plot_);
    empty_->position->setType(QCPItemPosition::ptAxisRectRatio);
    empty_->position->setAxisRect(plot_->axisRect());
    empty_->position->setCoords(0.5, 0.5);
    empty_->setColor(QColor(0x80, 0x80, 0x80));

    connect(plot_, &QCustomPlot::plottableClick, this, &ParetoChart::onPlottableClick);
    clear();
}

int ParetoChart::pointCount() const { return static_cast<int>(plainOutcomes_.size() + checkpointOutcomes_.size()); }

void ParetoChart::clear() {
    outcomes_.clear();
    plainOutcomes_.clear();
    checkpointOutcomes_.clear();
    front_.clear();
    selected_.reset();
    for (QCPGraph* graph : {plain_, checkpoint_, front_line_, ring_}) graph->data()->clear();
    ringLabel_->setVisible(false);
    limitLine_->setVisible(false);
    limitLabel_->setVisible(false);
    empty_->setText(tr("Feasible candidates appear here when a run ends."));
    empty_->setVisible(true);
    plot_->xAxis->setRange(0, 1);
    plot_->yAxis->setRange(0, 1);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ParetoChart::setData(const TuneResult& result, std::optional<double> limitBytes) {
    clear();
    outcomes_ = result.outcomes;
    std::vector<int> feasible;
    for (int i = 0; i < static_cast<int>(outcomes_.size()); ++i)
        if (outcomes_[i].feasible) feasible.push_back(i);
    // QCPGraph keeps its data sorted by key; sorting ourselves (stably) first keeps the click
    // index → outcome mapping exact, ties included.
    std::stable_sort(feasible.begin(), feasible.end(),
                     [&](int a, int b) { return outcomes_[a].peak_bytes < outcomes_[b].peak_bytes; });
    QVector<double> plainX, plainY, ckptX, ckptY;
    // The axes fit the data (and the limit) rather than start at zero: the candidates of one
    // search differ by a few per cent, which a zero-based axis would flatten into one row.
    double left = limitBytes.value_or(0) / kGB, right = left, bottom = 0, top = 0;
    bool first = true;
    for (int i : feasible) {
        const TuneOutcome& o = outcomes_[i];
        const bool ckpt = o.candidate.checkpoint;
        const double x = o.peak_bytes / kGB, y = o.samples_per_s;
        (ckpt ? ckptX : plainX).append(x);
        (ckpt ? ckptY : plainY).append(y);
        (ckpt ? checkpointOutcomes_ : plainOutcomes_).push_back(i);
        left = first && !limitBytes ? x : std::min(left, x);
        right = first && !limitBytes ? x : std::max(right, x);
        bottom = first ? y : std::min(bottom, y);
        top = first ? y : std::max(top, y);
        first = false;
    }
    plain_->setData(plainX, plainY, true);
    checkpoint_->setData(ckptX, ckptY, true);

    front_ = result.pareto;
    QVector<double> frontX, frontY;
    for (int i : front_) {
        if (i < 0 || i >= static_cast<int>(outcomes_.size())) continue;
        frontX.append(outcomes_[i].peak_bytes / kGB);
        frontY.append(outcomes_[i].samples_per_s);
    }
    // Carry the last step to the limit (or the right edge): beyond the front's last point no
    // more memory buys more throughput.
    if (!frontX.isEmpty()) {
        frontX.append(std::max(right, frontX.back()));
        frontY.append(frontY.back());
    }
    front_line_->setData(frontX, frontY, true);

    if (limitBytes) {
        const double limit = *limitBytes / kGB;
        limitLine_->point1->setCoords(limit, 0);
        limitLine_->point2->setCoords(limit, 1);
        limitLabel_->position->setCoords(limit, 0.98);
        limitLabel_->setText(tr("limit %1 GB").arg(limit, 0, 'g', 4));
        limitLine_->setVisible(true);
        limitLabel_->setVisible(true);
    }

    const double xPad = std::max(0.06 * (right - left), 0.5);
    plot_->xAxis->setRange(std::max(0.0, left - xPad), right + xPad);
    const double yPad = std::max(0.1 * (top - bottom), 0.05 * top);
    // Extra room on top for the selected candidate's label.
    if (top > 0) plot_->yAxis->setRange(std::max(0.0, bottom - yPad), top + 2 * yPad);
    else plot_->yAxis->setRange(0, 1);
    empty_->setVisible(feasible.empty());
    empty_->setText(result.cancelled ? tr("Cancelled before any candidate fitted.")
                                     : tr("No candidate fits the memory limit."));
    if (result.best) selected_ = *result.best;
    showSelection();
}

void ParetoChart::setSelected(std::optional<int> outcome) {
    if (outcome && (*outcome < 0 || *outcome >= static_cast<int>(outcomes_.size()) || !outcomes_[*outcome].feasible))
        outcome.reset();
    if (outcome == selected_) return;
    selected_ = outcome;
    showSelection();
}

void ParetoChart::showSelection() {
    ring_->data()->clear();
    ringLabel_->setVisible(selected_.has_value());
    if (selected_) {
        const TuneOutcome& o = outcomes_[*selected_];
        const double x = o.peak_bytes / kGB, y = o.samples_per_s;
        ring_->addData(x, y);
        // The label goes to the side with more room, so it stays inside the plot.
        const bool leftHalf = x < plot_->xAxis->range().center();
        const bool upperHalf = y > plot_->yAxis->range().center();
        ringAnchor_->position->setCoords(x, y);
        ringLabel_->setPositionAlignment((leftHalf ? Qt::AlignLeft : Qt::AlignRight) |
                                         (upperHalf ? Qt::AlignTop : Qt::AlignBottom));
        ringLabel_->position->setCoords(leftHalf ? 9 : -9, upperHalf ? 8 : -8);  // pixels from the ring's centre
        ringLabel_->setText(QString::fromStdString(o.candidate.label()));
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ParetoChart::onPlottableClick(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent*) {
    const std::vector<int>* outcomes = plottable == plain_        ? &plainOutcomes_
                                       : plottable == checkpoint_ ? &checkpointOutcomes_
                                                                  : nullptr;
    if (!outcomes || dataIndex < 0 || dataIndex >= static_cast<int>(outcomes->size())) return;
    setSelected((*outcomes)[dataIndex]);
    emit candidateClicked((*outcomes)[dataIndex]);
}

}  // namespace mario::views
