#include "views/PlotStyle.h"

#include <qcustomplot.h>

#include <algorithm>

#include "views/TickSpacing.h"

namespace mario::views {

std::pair<double, QString> byteUnitFor(double bytes) {
    if (bytes >= 1e9) return {1e9, QStringLiteral("GB")};
    if (bytes >= 1e6) return {1e6, QStringLiteral("MB")};
    if (bytes >= 1e3) return {1e3, QStringLiteral("KB")};
    return {1, QStringLiteral("bytes")};
}

void applyPlotStyle(QCustomPlot* plot) {
    const QColor axisColor(0x55, 0x55, 0x55);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setBasePen(QPen(axisColor, 1));
        axis->setTickPen(QPen(axisColor, 1));
        axis->setSubTickPen(QPen(axisColor, 1));
        axis->setTickLabelColor(QColor(0x30, 0x30, 0x30));
        axis->setLabelColor(QColor(0x30, 0x30, 0x30));
        axis->grid()->setPen(QPen(QColor(0xDD, 0xDD, 0xDD), 1, Qt::DotLine));
    }
    plot->axisRect()->setMinimumMargins(QMargins(kPlotLeftMargin, 8, 16, 8));
    // Drag pans replot many times a second; antialiasing off while dragging keeps it smooth.
    plot->setNoAntialiasingOnDrag(true);
    keepTickLabelsApart(plot);
    // QCustomPlot's minimum size (its axis rect's minimum plus legend, labels and margins)
    // changes as legend rows come and go; the widget layout above learns of it only when told.
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
        const QSize needs = plot->plotLayout()->minimumOuterSizeHint();  // QCustomPlot's minimumSizeHint
        if (needs == plot->property("mario-min-hint").toSize()) return;
        plot->setProperty("mario-min-hint", needs);
        plot->updateGeometry();
    });
}

QList<QCPAbstractLegendItem*> legendItems(const QCPLegend* legend) {
    QList<QCPAbstractLegendItem*> items;
    for (int i = 0; i < legend->elementCount(); ++i)
        if (QCPAbstractLegendItem* item = legend->item(i)) items.append(item);
    return items;
}

void clearLegend(QCPLegend* legend) {
    legend->clearItems();
    legend->simplify();
}

namespace {

// Legend entries keep their natural width (a grid cell would stretch them across the whole
// plot), and as many go on a line as the plot's width allows.
void fitLegend(QCustomPlot* plot, int maxColumns) {
    QCPLegend* legend = plot->legend;
    const QList<QCPAbstractLegendItem*> items = legendItems(legend);
    if (!legend->visible() || items.isEmpty()) return;
    int widest = 1;
    for (QCPAbstractLegendItem* item : items) {
        item->setSizeConstraintRect(QCPLayoutElement::scrOuterRect);
        const QSize hint = item->minimumOuterSizeHint();
        item->setMaximumSize(hint);
        widest = std::max(widest, hint.width());
    }
    const int available = plot->width() - legend->margins().left() - legend->margins().right();
    const int columns = std::clamp(available / (widest + legend->columnSpacing()), 1, std::max(1, maxColumns));
    // setWrap alone only places entries added later; re-filling the grid puts every entry on
    // the new one and leaves no empty cell before the last entry (an emptied grid, after
    // removals, is compacted the same way).
    const int count = static_cast<int>(items.size());
    const int rows = (count + columns - 1) / columns;
    if (columns != legend->wrap() || legend->rowCount() != rows || legend->columnCount() != std::min(columns, count)) {
        legend->setWrap(columns);
        legend->setFillOrder(legend->fillOrder(), /*rearrange=*/true);
    }
}

}  // namespace

void placeLegendOnTop(QCustomPlot* plot, int maxColumns) {
    QCPLegend* legend = plot->legend;
    if (QCPLayout* old = legend->layout()) old->take(legend);
    plot->axisRect()->insetLayout()->simplify();
    // The legend sits in a row of its own next to an empty stretching cell: its compact
    // entries cap its width, and that cap must not reach the column the axis rect is in.
    auto* row = new QCPLayoutGrid;
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, row);
    row->addElement(0, 0, legend);
    row->addElement(0, 1, new QCPLayoutElement(plot));
    row->setColumnStretchFactor(0, 0.001);
    row->setMargins(QMargins(0, 0, 0, 0));
    // The legend row takes only the height it needs; the plot gets the rest.
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setWrap(maxColumns);
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setIconSize(16, 11);
    legend->setColumnSpacing(18);
    legend->setRowSpacing(2);
    legend->setMargins(QMargins(kPlotLeftMargin, 4, 8, 0));
    legend->setVisible(true);
    // Items come and go with the data and the width changes with the window: refit each time.
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot, maxColumns] { fitLegend(plot, maxColumns); });
}

}  // namespace mario::views
