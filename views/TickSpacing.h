#pragma once
// Tick labels that never run into each other, at any plot size. QCustomPlot chooses its ticks
// from the range alone (about five), whatever the axis's length in pixels: a memory chart
// squeezed to a 35-pixel axis (a 1024×700 window) drew "0 10 20 30 40" on top of one another.
// After every layout, each numeric axis gets as many ticks as fit (up to QCustomPlot's five)
// with a gap between labels, and the layout is redone with them before anything is drawn.
// Text tickers (device names) are thinned by their owners, which know what to keep.
#include <QRect>
#include <QVector>

class QCPAxis;
class QCustomPlot;

namespace mario::views {

// The rectangles the labels of `axis`'s current ticks take, in plot pixels, in tick order
// (ticks outside the range are not drawn and are left out). Tests read them too.
QVector<QRect> tickLabelRects(const QCPAxis* axis);

// True when two neighbouring rectangles come closer than `gap` pixels along the axis.
bool labelsCrowded(const QVector<QRect>& rects, bool vertical, int gap);

// Installs the fitting on both axes of `plot` (applyPlotStyle does, for every chart).
void keepTickLabelsApart(QCustomPlot* plot);

// Runs the plot's layout again, as QCustomPlot does before drawing (after changing what the
// margins depend on: tick labels, minimum sizes), without drawing.
void relayout(QCustomPlot* plot);

}  // namespace mario::views
