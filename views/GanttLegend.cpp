#include "views/GanttLegend.h"

#include <qcustomplot.h>

#include "views/DependencyArrows.h"
#include "views/PlotStyle.h"
#include "views/RecomputeCover.h"
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
    if (extras.recomputeCover) {
        // The covers this schedule has, so that the legend names only what the chart shows.
        bool present[4] = {};
        for (const auto& lane : timeline.lanes)
            for (const TimelineBox& box : lane) present[static_cast<int>(box.cover)] = true;
        for (RecomputeCover cover : {RecomputeCover::Hidden, RecomputeCover::Partly, RecomputeCover::Exposed})
            if (present[static_cast<int>(cover)])
                legend->addItem(new SwatchLegendItem(legend, colorOf(BoxKind::Recompute),
                                                     QBrush(coverColor(cover), Qt::BDiagPattern), coverLabel(cover)));
    }
    if (extras.criticalPath)
        legend->addItem(new SwatchLegendItem(legend, arrowColor(Arrow::Role::Critical), QBrush(Qt::NoBrush),
                                             QStringLiteral("critical path")));
    if (extras.boundChain)
        legend->addItem(new SwatchLegendItem(legend, arrowColor(Arrow::Role::Critical), QBrush(Qt::NoBrush),
                                             QStringLiteral("chain that sets the Rs' bound")));
    legend->setVisible(!legendItems(legend).isEmpty());
}

}  // namespace mario::views
