#pragma once
// A live run's per-instruction heat map (issue 14, item 6): the simulated schedule's compute
// instructions, one row per device at their simulated times, each coloured by how long it
// really took against the simulation (measured ÷ simulated, the median over the iterations
// after the warm-up). White is as simulated; blue ran faster, red slower, full colour at ×0.5
// and ×2 (a diverging blue–red scale, which reads with red-green colour blindness too). Grey
// boxes are not measured yet. A legend strip on top says so; hovering a box gives its numbers.
//
// Painted with QPainter rather than as a Gantt plottable: it is one picture of a run of at most
// a few thousand instructions, redrawn at the window's 10 Hz; it follows the simulated Gantt's
// zoom and shares its left margin (views/PlotStyle.h), so the boxes line up under it.
#include <QColor>
#include <QWidget>
#include <optional>
#include <utility>

namespace mario::gui {

class LiveMeasurements;

class InstructionHeatMap : public QWidget {
    Q_OBJECT
public:
    // Reads `measurements` (not owned) on every paint; call update() when they change.
    explicit InstructionHeatMap(const LiveMeasurements* measurements, QWidget* parent = nullptr);

    // The colour of a ratio on the scale; grey for none.
    static QColor colorOf(std::optional<double> ratio);
    // Where a compute instruction's box is drawn (empty when it has none), and the box under a
    // point: (device, index in its program).
    QRectF boxRect(int device, int index) const;
    std::optional<std::pair<int, int>> instructionAt(const QPointF& pos) const;
    QString tooltipFor(int device, int index) const;
    QString legendText() const;

    QSize sizeHint() const override { return {800, 220}; }

public slots:
    // The visible time range, in the simulated schedule's ms: the window passes the simulated
    // Gantt's, so each box sits under the one it colours. The whole step until set.
    void setTimeRange(double lower, double upper);
    QSize minimumSizeHint() const override { return {200, 90}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Geometry {
        double left = 0, right = 0, top = 0, bottom = 0, rowHeight = 0, scale = 0, lower = 0;
    };
    Geometry geometry() const;
    QRectF boxRect(const Geometry& g, int device, int index) const;
    void paintLegend(QPainter& painter) const;
    bool drawsBox(int device, int index) const;

    static constexpr int kLegendHeight = 26;
    // The Gantt's axis rect ends this far from its right edge (QCustomPlot's automatic margin
    // for the last tick label); the heat map ends there too.
    static constexpr int kRightMargin = 16;
    const LiveMeasurements* measurements_;
    double lower_ = 0, upper_ = 0;  // upper_ <= lower_: the whole step
};

}  // namespace mario::gui
