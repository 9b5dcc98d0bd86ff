#include "views/GanttLegend.h"

#include <qcustomplot.h>

#include "views/DependencyArrows.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"

namespace mario::views {

void fillGanttLegend(QCPLegend* legend, const Timeline& timeline, ColorMode mode, const GanttLegendExtras& extras) {
    clearLegend(legend);
    for (const LegendEntry& entry : legendEntries(mode, timeline))
        legend->addItem(new SwatchLegendItem(legend, entry.fill, entry.overlay, entry.label));
    if (extras.shadeBubbles)
        legend->addItem(new SwatchLegendItem(legend, QColor(0xEE, 0xEE, 0xEE),
                                             QBrush(QColor(0xB0, 0xB0, 0xB0), Qt::FDiagPattern),
                                             QStringLiteral("idle (bubble)")));
    if (extras.criticalPath)
        legend->addItem(new SwatchLegendItem(legend, arrowColor(Arrow::Role::Critical), QBrush(Qt::NoBrush),
                                             QStringLiteral("critical path")));
    if (extras.boundChain)
        legend->addItem(new SwatchLegendItem(legend, arrowColor(Arrow::Role::Critical), QBrush(Qt::NoBrush),
                                             QStringLiteral("chain that sets the Rs' bound")));
    legend->setVisible(!legendItems(legend).isEmpty());
}

}  // namespace mario::views
