#pragma once
// The tuner's convergence curve, like the Mario paper's Figure 11: the best throughput found
// so far (samples/s) against the number of candidates evaluated. It grows live while a
// search runs; the x axis spans the whole search space from the start, so progress reads as
// the line creeping right and jumps in the line are the moments a better candidate appeared.
#include <QPointF>
#include <QVector>
#include <QWidget>
#include <optional>

class QCustomPlot;
class QCPGraph;
class QCPItemText;

namespace mario::views {

class TunerCurveChart : public QWidget {
    Q_OBJECT
public:
    explicit TunerCurveChart(QWidget* parent = nullptr);

    // Forgets the curve; `total` (the size of the search space) fixes the x axis, 0 lets it
    // follow the points.
    void clear(int total = 0);
    // One observation: after `evaluated` candidates the best feasible one reaches
    // `bestSamplesPerS` (0 while nothing fits). Observations must not go back in `evaluated`.
    void addPoint(int evaluated, double bestSamplesPerS);

    // The curve as drawn (a run of equal values is kept as its two ends).
    const QVector<QPointF>& points() const { return points_; }
    std::optional<QPointF> lastPoint() const;
    QCustomPlot* plot() const { return plot_; }

private:
    void rebuild();

    QCustomPlot* plot_;
    QCPGraph* graph_;
    QCPItemText* caption_;
    QCPItemText* empty_;
    QVector<QPointF> points_;
    int total_ = 0;
};

}  // namespace mario::views
