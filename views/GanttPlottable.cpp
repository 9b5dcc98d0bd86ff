#include "views/GanttPlottable.h"

#include "views/RecomputeCover.h"

#include <algorithm>
#include <cmath>

namespace mario::views {

namespace {
const QColor kBubbleFill(0xEE, 0xEE, 0xEE);
const QColor kBubbleHatch(0xB0, 0xB0, 0xB0);
const QColor kHighlightPen(0x1A, 0x1A, 0x1A);
}  // namespace

GanttPlottable::GanttPlottable(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis) {
    // Selection belongs to the view's drag and hover logic, not to QCustomPlot's.
    setSelectable(QCP::stNone);
    setAntialiasedFill(false);
    labelFont_ = parentPlot() ? parentPlot()->font() : QFont();
    labelFont_.setPointSizeF(std::max(6.0, labelFont_.pointSizeF() * 0.85));
    setColorMode(ColorMode::Kind);
}

void GanttPlottable::setColorMode(ColorMode mode) {
    batcher_.setColorMode(mode);
    // Styles per slot once per mode, not per box or per frame.
    slotStyles_.clear();
    dimmedStyles_.clear();
    for (int slot = 0; slot < batcher_.slotCount(); ++slot) {
        slotStyles_.push_back(boxStyle(BoxBatcher::kindOfSlot(slot), BoxBatcher::groupOfSlot(slot), mode));
        dimmedStyles_.push_back(dimmed(slotStyles_.back()));
    }
}

void GanttPlottable::setCriticalPath(std::vector<BoxRef> boxes) { criticalPath_ = std::move(boxes); }

void GanttPlottable::setTimeline(const Timeline* timeline) { timeline_ = timeline; }

void GanttPlottable::setHighlights(std::vector<BoxRef> boxes) { highlights_ = std::move(boxes); }

void GanttPlottable::setGhost(std::optional<BoxRef> box, double start, bool valid) {
    ghost_ = box;
    ghostStart_ = start;
    ghostValid_ = valid;
}

VisibleWindow GanttPlottable::visibleWindow() const {
    VisibleWindow window;
    const QCPRange range = mKeyAxis->range();
    window.lowKey = range.lower;
    window.highKey = range.upper;
    // The key axis is linear, so two points define the map and each box costs a multiply-add.
    const double p0 = mKeyAxis->coordToPixel(0), p1 = mKeyAxis->coordToPixel(1);
    window.toPixel = {p0, p1 - p0};
    const QRect clip = clipRect();
    window.clipLeft = clip.left();
    window.clipRight = clip.right() + 1;
    return window;
}

QRectF GanttPlottable::pixelRect(const TimelineBox& box, double start) const {
    const double x0 = mKeyAxis->coordToPixel(start), x1 = mKeyAxis->coordToPixel(start + (box.end - box.start));
    const double y0 = mValueAxis->coordToPixel(box.lane - kHalfHeight);
    const double y1 = mValueAxis->coordToPixel(box.lane + kHalfHeight);
    return QRectF(QPointF(x0, y0), QPointF(x1, y1)).normalized();
}

void GanttPlottable::draw(QCPPainter* painter) {
    lastRectCount_ = lastLabelCount_ = lastDrawRectsCalls_ = 0;
    if (!timeline_ || !mKeyAxis || !mValueAxis) return;
    batcher_.clear();
    const VisibleWindow window = visibleWindow();
    const QRect clip = clipRect();
    auto rowOf = [this](std::size_t l) {
        const double lane = static_cast<double>(l);
        const double ya = mValueAxis->coordToPixel(lane - kHalfHeight);
        const double yb = mValueAxis->coordToPixel(lane + kHalfHeight);
        return std::pair(std::round(std::min(ya, yb)), std::round(std::max(ya, yb)));
    };
    const std::size_t lanes = timeline_->lanes.size();
    for (std::size_t l = 0; l < lanes; ++l) {
        const auto [top, bottom] = rowOf(l);
        if (bottom < clip.top() || top > clip.bottom()) continue;
        // Thousands of lanes fitted in view share pixel rows: a row thinner than a pixel
        // shows the lane drawn last on it, so the others are not drawn (65 536 lanes: 30 ms
        // of rectangles a replot, nearly all painted over).
        if (bottom - top <= 1 && l + 1 < lanes && rowOf(l + 1) == std::pair(top, bottom)) continue;
        batcher_.addLane(timeline_->lanes[l], window, top, std::max(bottom, top + 1), shadeBubbles_,
                         timeline_->makespan);
    }

    painter->setAntialiasing(false);
    painter->setPen(Qt::NoPen);
    if (shadeBubbles_ && !batcher_.bubbles().isEmpty()) {
        const auto& bubbles = batcher_.bubbles();
        painter->setBrush(kBubbleFill);
        painter->drawRects(bubbles.constData(), static_cast<int>(bubbles.size()));
        painter->setBrush(QBrush(kBubbleHatch, Qt::FDiagPattern));
        painter->drawRects(bubbles.constData(), static_cast<int>(bubbles.size()));
        lastDrawRectsCalls_ += 2;
    }
    for (int slot = 0; slot < batcher_.slotCount(); ++slot) {
        const auto& rects = batcher_.slotRects(slot);
        if (rects.isEmpty()) continue;
        const BoxStyle& style = slotStyle(slot);
        painter->setBrush(style.fill);
        painter->drawRects(rects.constData(), static_cast<int>(rects.size()));
        ++lastDrawRectsCalls_;
        const QBrush& overlay = style.overlay;
        if (overlay.style() != Qt::NoBrush) {
            painter->setBrush(overlay);
            painter->drawRects(rects.constData(), static_cast<int>(rects.size()));
            ++lastDrawRectsCalls_;
        }
    }
    lastRectCount_ = batcher_.rectCount();
    drawLabels(painter);
    drawRecomputeCover(painter);
    drawCriticalPath(painter);
    drawHighlights(painter);
    drawArrows(painter, arrows_, pixelMap(), kHalfHeight);
    drawGhost(painter);
}

const QStaticText& GanttPlottable::labelText(int microbatch) {
    // QStaticText lays the glyphs out once; a redraw then only blits them.
    while (static_cast<int>(labelCache_.size()) <= microbatch) {
        QStaticText text(QString::number(static_cast<int>(labelCache_.size())));
        text.setTextFormat(Qt::PlainText);
        text.prepare(QTransform(), labelFont_);
        labelCache_.push_back(std::move(text));
    }
    return labelCache_[static_cast<std::size_t>(microbatch)];
}

void GanttPlottable::drawLabels(QCPPainter* painter) {
    if (batcher_.labels().empty()) return;
    painter->setFont(labelFont_);
    QColor current;
    for (const BoxLabel& label : batcher_.labels()) {
        const QStaticText& text = labelText(label.microbatch);
        const QSizeF size = text.size();
        if (size.width() + 4 > label.rect.width() || size.height() > label.rect.height() + 2) continue;
        const QColor color = slotStyle(label.slot).text;
        if (color != current) {
            painter->setPen(color);
            current = color;
        }
        const QPointF topLeft(label.rect.center().x() - size.width() / 2, label.rect.center().y() - size.height() / 2);
        painter->drawStaticText(topLeft, text);
        ++lastLabelCount_;
    }
}

TimeLaneToPixel GanttPlottable::pixelMap() const {
    return [this](double time, double lane) { return coordsToPixels(time, lane); };
}

void GanttPlottable::drawCriticalPath(QCPPainter* painter) {
    if (criticalPath_.empty()) return;
    const QCPRange range = mKeyAxis->range();
    const ColorMode mode = colorMode();
    // The path's boxes again over the washed-out batch, one by one: a path is a few hundred
    // boxes at most (it never holds two boxes of one device at the same time).
    std::vector<Arrow> hops;
    const TimelineBox* previous = nullptr;
    painter->setAntialiasing(false);
    for (const BoxRef& ref : criticalPath_) {
        const TimelineBox* box = timeline_->find(ref);
        if (!box) continue;
        if (previous && previous->lane != box->lane)
            hops.push_back({previous->end, previous->lane, box->start, box->lane, Arrow::Role::Critical});
        previous = box;
        if (box->end <= range.lower || box->start >= range.upper) continue;
        const QRectF rect = pixelRect(*box, box->start);
        const BoxStyle style = boxStyle(box->kind, colorGroupOf(*box, mode), mode);
        // At least a few pixels wide, so a short step of the path stays visible when zoomed out.
        const double grow = std::max(0.0, (3 - rect.width()) / 2);
        const QRectF shown = rect.adjusted(-grow, 0, grow, 0);
        painter->setPen(QPen(kHighlightPen, 1.5));
        painter->setBrush(style.fill);
        painter->drawRect(shown);
        if (style.overlay.style() != Qt::NoBrush) {
            painter->setPen(Qt::NoPen);
            painter->setBrush(style.overlay);
            painter->drawRect(shown);
        }
        if (box->microbatch >= 0) {
            const QStaticText& text = labelText(box->microbatch);
            if (text.size().width() + 4 <= rect.width() && text.size().height() <= rect.height() + 2) {
                painter->setFont(labelFont_);
                painter->setPen(style.text);
                painter->drawStaticText(rect.center() - QPointF(text.size().width() / 2, text.size().height() / 2),
                                        text);
            }
        }
    }
    drawArrows(painter, hops, pixelMap(), kHalfHeight);
}

// Over the visible recompute boxes, one by one (only while the View toggle is on): a hatch and
// an outline in the cover's colour. Boxes under a pixel wide get the outline only.
void GanttPlottable::drawRecomputeCover(QCPPainter* painter) {
    if (!shadeRecompute_) return;
    const QCPRange range = mKeyAxis->range();
    const QRect clip = clipRect();
    painter->setAntialiasing(false);
    for (const auto& lane : timeline_->lanes) {
        if (lane.empty()) continue;
        const QRectF row = pixelRect(lane.front(), lane.front().start);
        if (row.bottom() < clip.top() || row.top() > clip.bottom()) continue;
        for (auto it = BoxBatcher::firstEndingAfter(lane, range.lower); it != lane.end() && it->start < range.upper;
             ++it) {
            if (it->cover == RecomputeCover::None) continue;
            const QColor color = coverColor(it->cover);
            const QRectF rect = pixelRect(*it, it->start);
            painter->setPen(QPen(color, 1.5));
            painter->setBrush(rect.width() >= 1 ? QBrush(color, Qt::BDiagPattern) : QBrush(Qt::NoBrush));
            painter->drawRect(rect.adjusted(0.75, 0.75, -0.75, -0.75));
        }
    }
    painter->setPen(Qt::NoPen);
}

void GanttPlottable::drawHighlights(QCPPainter* painter) {
    if (highlights_.empty()) return;
    const QCPRange range = mKeyAxis->range();
    painter->setAntialiasing(true);
    painter->setPen(QPen(kHighlightPen, 2.5));
    painter->setBrush(Qt::NoBrush);
    for (const BoxRef& ref : highlights_) {
        const TimelineBox* box = timeline_->find(ref);
        if (!box || box->end <= range.lower || box->start >= range.upper) continue;
        const QRectF rect = pixelRect(*box, box->start);
        // At least a few pixels, so a highlighted sliver in a folded stretch stays findable.
        const double grow = std::max(0.0, (4 - rect.width()) / 2);
        painter->drawRect(rect.adjusted(-1 - grow, -1, 1 + grow, 1));
    }
    painter->setAntialiasing(false);
}

void GanttPlottable::drawGhost(QCPPainter* painter) {
    if (!ghost_) return;
    const TimelineBox* box = timeline_->find(*ghost_);
    if (!box) return;
    // A drop that would be refused shows red, so the user sees it before letting go.
    QColor fill = ghostValid_ ? colorOf(box->kind) : QColor(0xD0, 0x20, 0x30);
    fill.setAlpha(150);
    painter->setAntialiasing(true);
    painter->setPen(QPen(ghostValid_ ? kHighlightPen : QColor(0x8a, 0x00, 0x10), 1.5, Qt::DashLine));
    painter->setBrush(fill);
    painter->drawRect(pixelRect(*box, ghostStart_));
    painter->setAntialiasing(false);
}

std::optional<int> GanttPlottable::laneAt(double pixelY) const {
    if (!timeline_ || !mValueAxis) return std::nullopt;
    const double value = mValueAxis->pixelToCoord(pixelY);
    const long lane = std::lround(value);
    if (lane < 0 || lane >= static_cast<long>(timeline_->lanes.size()) || std::abs(value - lane) > 0.5)
        return std::nullopt;
    return static_cast<int>(lane);
}

std::optional<BoxRef> GanttPlottable::boxAt(const QPointF& pixel) const {
    if (!timeline_ || !mKeyAxis || !mValueAxis) return std::nullopt;
    if (!clipRect().contains(pixel.toPoint())) return std::nullopt;
    const double value = mValueAxis->pixelToCoord(pixel.y());
    const long lane = std::lround(value);
    if (lane < 0 || lane >= static_cast<long>(timeline_->lanes.size()) || std::abs(value - lane) > kHalfHeight)
        return std::nullopt;
    const double key = mKeyAxis->pixelToCoord(pixel.x());
    const auto& boxes = timeline_->lanes[static_cast<std::size_t>(lane)];
    const auto it = BoxBatcher::firstEndingAfter(boxes, key);
    if (it == boxes.end() || it->start > key) return std::nullopt;
    return BoxRef{static_cast<int>(lane), it->program_index};
}

QPointF GanttPlottable::boxCenter(const BoxRef& ref) const {
    const TimelineBox* box = timeline_ ? timeline_->find(ref) : nullptr;
    if (!box) return {};
    return coordsToPixels((box->start + box->end) / 2, box->lane);
}

double GanttPlottable::selectTest(const QPointF& pos, bool onlySelectable, QVariant* details) const {
    Q_UNUSED(details)
    if (onlySelectable && mSelectable == QCP::stNone) return -1;
    return boxAt(pos) ? 0.0 : -1.0;
}

QCPRange GanttPlottable::getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain) const {
    foundRange = timeline_ && timeline_->makespan > 0 && inSignDomain != QCP::sdNegative;
    return foundRange ? QCPRange(0, timeline_->makespan) : QCPRange();
}

QCPRange GanttPlottable::getValueRange(bool& foundRange, QCP::SignDomain inSignDomain, const QCPRange&) const {
    foundRange = timeline_ && !timeline_->lanes.empty() && inSignDomain != QCP::sdNegative;
    return foundRange ? QCPRange(-0.5, static_cast<double>(timeline_->lanes.size()) - 0.5) : QCPRange();
}

void GanttPlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
    // The plottable as a whole: a forward next to a backward, as in a 1F1B steady state.
    painter->setPen(Qt::NoPen);
    QRectF left = rect, right = rect;
    left.setRight(rect.center().x() - 1);
    right.setLeft(rect.center().x());
    painter->setBrush(colorOf(BoxKind::Forward));
    painter->drawRect(left);
    painter->setBrush(colorOf(BoxKind::Backward));
    painter->drawRect(right);
}

}  // namespace mario::views
