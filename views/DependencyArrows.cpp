#include "views/DependencyArrows.h"

#include <QPainterPath>
#include <QPolygonF>
#include <cmath>
#include <qcustomplot.h>

namespace mario::views {

std::vector<Arrow> dependencyArrows(const Timeline& timeline, const BoxRef& ref) {
    std::vector<Arrow> arrows;
    const TimelineBox* box = timeline.find(ref);
    if (!box) return arrows;
    const InstructionRef at{ref.lane, ref.program_index};
    const bool wait = box->kind == BoxKind::Wait;
    for (const Message* message : timeline.messages.incoming(at)) {
        if (!message->send.valid() || message->send.device == ref.lane) continue;
        // A compute box reads the data when it starts; a wait ends when the data arrives.
        const double to = wait ? box->end : box->start;
        arrows.push_back({message->sent_ms, message->send.device, to, ref.lane, Arrow::Role::Incoming});
    }
    if (wait) return arrows;
    for (const Message* message : timeline.messages.outgoing(at)) {
        const InstructionRef target = message->consumer.valid() ? message->consumer : message->recv;
        if (!target.valid() || target.device == ref.lane) continue;
        const double to = message->consumer.valid() ? message->consumed_ms : message->received_ms;
        arrows.push_back({message->sent_ms, ref.lane, to, target.device, Arrow::Role::Outgoing});
    }
    return arrows;
}

QColor arrowColor(Arrow::Role role) {
    switch (role) {
        case Arrow::Role::Incoming: return QColor(0x1B, 0x4F, 0x9C);  // dark blue: what it waited for
        case Arrow::Role::Outgoing: return QColor(0xB3, 0x4A, 0x00);  // dark vermilion: what it feeds
        case Arrow::Role::Critical: return QColor(0x1A, 0x1A, 0x1A);
    }
    return Qt::black;
}

void drawArrows(QCPPainter* painter, const std::vector<Arrow>& arrows, const TimeLaneToPixel& toPixel,
                double halfHeight) {
    if (arrows.empty()) return;
    painter->save();
    painter->setAntialiasing(true);
    for (const Arrow& arrow : arrows) {
        // Leave and enter through the edges that face each other (lane values grow downwards
        // or upwards depending on the axis; the sign of the lane step is what matters).
        const double sign = arrow.toLane >= arrow.fromLane ? 1.0 : -1.0;
        const QPointF from = toPixel(arrow.fromTime, arrow.fromLane + sign * halfHeight);
        const QPointF to = toPixel(arrow.toTime, arrow.toLane - sign * halfHeight);
        const QColor color = arrowColor(arrow.role);
        painter->setPen(QPen(color, arrow.role == Arrow::Role::Critical ? 2.0 : 1.6));
        painter->setBrush(Qt::NoBrush);
        painter->drawLine(from, to);
        // A head of fixed pixel size pointing along the line.
        const QPointF d = to - from;
        const double length = std::hypot(d.x(), d.y());
        if (length < 1) continue;
        const QPointF unit = d / length, normal(-unit.y(), unit.x());
        const double size = 7;
        QPolygonF head;
        head << to << to - unit * size + normal * size * 0.45 << to - unit * size - normal * size * 0.45;
        painter->setPen(Qt::NoPen);
        painter->setBrush(color);
        painter->drawPolygon(head);
        // A dot at the source, so an arrow leaving a folded sliver still shows where it starts.
        painter->drawEllipse(from, 2.2, 2.2);
    }
    painter->restore();
}

}  // namespace mario::views
