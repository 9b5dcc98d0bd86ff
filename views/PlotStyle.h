#pragma once
// The look every workbench chart shares, so the Gantt and the memory charts stacked under
// it line up: same fonts, same axis colours, and the same minimum left margin (the plots
// share a time axis, so their axis rects should start at the same x). Every chart also keeps
// its tick labels apart (TickSpacing.h) and tells the widget layout its minimum size.
#include <QList>
#include <QString>
#include <utility>

class QCustomPlot;
class QCPLegend;
class QCPAbstractLegendItem;

namespace mario::views {

// The unit a memory axis counts in, as (bytes per unit, name): decimal units, as the config's
// memory_limit_gb and the summary use, the largest in which `bytes` (the tallest value) is at
// least 1, so teaching plans (KB) read as well as GPT-3 (GB).
std::pair<double, QString> byteUnitFor(double bytes);

// Wide enough for "device 31" or a memory axis with its label.
inline constexpr int kPlotLeftMargin = 96;

void applyPlotStyle(QCustomPlot* plot);
// Moves the plot's legend out of the axis rect into a row above it, laid out left to right
// and wrapping at the plot's width (at most maxColumns per line), so it never hides data.
void placeLegendOnTop(QCustomPlot* plot, int maxColumns = 10);

// The legend's entries, in order. Use this, never QCPLegend::itemCount()/item(i): once the
// legend wraps, itemCount() counts the cells of its grid (rows × columns) and item(i) is
// nullptr for the empty cells of the last row.
QList<QCPAbstractLegendItem*> legendItems(const QCPLegend* legend);
// Removes every entry and the emptied cells, so the next entries fill the grid from the top
// left with the legend's current wrap (QCPLegend::clearItems keeps the old grid's shape).
void clearLegend(QCPLegend* legend);

}  // namespace mario::views
