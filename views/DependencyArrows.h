#pragma once
// Arrows between lanes for the data a box depends on and the data it feeds: what Perfetto
// calls flows, and what a reader of a pipeline schedule asks first ("why does this backward
// start here?"). They are drawn from time/lane coordinates by GanttPlottable::setArrows;
// the view asks for a hovered box's arrows with dependencyArrows().
#include <cstdint>
#include <functional>
#include <vector>

#include <QPointF>

#include "views/Timeline.h"

class QCPPainter;

namespace mario::views {

struct Arrow {
    enum class Role : std::uint8_t {
        Incoming,  // data the box waited for or read
        Outgoing,  // data the box produced for another device
        Critical,  // a hop of the critical path between devices
    };
    double fromTime = 0;
    int fromLane = 0;
    double toTime = 0;
    int toLane = 0;
    Role role = Role::Incoming;
    friend bool operator==(const Arrow&, const Arrow&) = default;
};

// The cross-device data dependencies of one box, from the timeline's message graph:
//  - a compute box: incoming arrows from the end of each producing box (the SEND's issue
//    time, on the sender's lane) to this box's start; outgoing arrows from this box's end to
//    the start of each box that consumes its output;
//  - a wait box: the message it waited for, from the producer's end to the wait's end (the
//    arrival that released it).
// Dependencies on the same device are program order and get no arrow. Empty when the box is
// not in the timeline.
std::vector<Arrow> dependencyArrows(const Timeline& timeline, const BoxRef& box);

// Plot pixels of a (time, lane value) point; lane values are fractional to reach box edges.
using TimeLaneToPixel = std::function<QPointF(double time, double lane)>;

// Draws each arrow from the edge of its source lane's boxes to the facing edge of its target
// lane's (halfHeight: GanttPlottable::kHalfHeight), with a head at the target, coloured by
// role. Antialiased: arrows are few (one box's dependencies, or the path's hops).
void drawArrows(QCPPainter* painter, const std::vector<Arrow>& arrows, const TimeLaneToPixel& toPixel,
                double halfHeight);

// The pen colour of a role, for the view's legend.
QColor arrowColor(Arrow::Role role);

}  // namespace mario::views
