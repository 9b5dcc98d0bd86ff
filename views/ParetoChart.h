#pragma once
// Throughput against peak memory for every feasible candidate of a tuner run: one dot per
// candidate (coloured by whether it checkpoints, which is the paper's argument: freed memory
// buys larger micro-batches and deeper pipelines), the Pareto front as a step line (the best
// throughput any memory budget up to x can buy), the memory limit as a vertical line and the
// selected candidate ringed and labelled. Clicking a dot reports its candidate.
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

#include "core/tune/TuneTypes.h"

class QCustomPlot;
class QCPGraph;
class QCPItemText;
class QCPItemTracer;
class QCPItemStraightLine;
class QCPAbstractPlottable;
class QMouseEvent;

namespace mario::views {

class ParetoChart : public QWidget {
    Q_OBJECT
public:
    explicit ParetoChart(QWidget* parent = nullptr);

    // Outcome indices below are indices into result.outcomes. The selection resets to the
    // result's best.
    void setData(const TuneResult& result, std::optional<double> limitBytes);
    void clear();
    void setSelected(std::optional<int> outcome);

    std::optional<int> selected() const { return selected_; }
    int pointCount() const;                                   // feasible candidates drawn
    const std::vector<int>& front() const { return front_; }  // by ascending memory
    QCustomPlot* plot() const { return plot_; }

signals:
    void candidateClicked(int outcome);

private:
    void onPlottableClick(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent* event);
    void showSelection();

    QCustomPlot* plot_;
    QCPGraph* plain_;       // feasible, no checkpointing
    QCPGraph* checkpoint_;  // feasible, Mario checkpointing
    QCPGraph* front_line_;
    QCPGraph* ring_;             // the selected candidate
    QCPItemTracer* ringAnchor_;  // the label hangs off it at a pixel offset
    QCPItemText* ringLabel_;
    QCPItemStraightLine* limitLine_;
    QCPItemText* limitLabel_;
    QCPItemText* empty_;
    // Per scatter graph, the outcome behind each data point in the graph's (key-sorted) order.
    std::vector<int> plainOutcomes_, checkpointOutcomes_;
    std::vector<int> front_;
    std::vector<TuneOutcome> outcomes_;
    std::optional<int> selected_;
};

}  // namespace mario::views
