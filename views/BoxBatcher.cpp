#include "views/BoxBatcher.h"

#include <algorithm>
#include <cmath>

namespace mario::views {

void BoxBatcher::setColorMode(ColorMode mode) {
    mode_ = mode;
    rects_.resize(static_cast<std::size_t>(colorGroupCount(mode)) * static_cast<std::size_t>(BoxKind::Count));
}

void BoxBatcher::clear() {
    // clear() keeps capacity, so a steady redraw allocates nothing.
    for (auto& list : rects_) list.clear();
    labels_.clear();
    bubbles_.clear();
    group_ = {};
    run_ = {};
}

int BoxBatcher::rectCount() const {
    qsizetype count = 0;
    for (const auto& list : rects_) count += list.size();
    return static_cast<int>(count);
}

std::vector<TimelineBox>::const_iterator BoxBatcher::firstEndingAfter(const std::vector<TimelineBox>& boxes,
                                                                      double key) {
    return std::partition_point(boxes.begin(), boxes.end(), [key](const TimelineBox& box) { return box.end <= key; });
}

void BoxBatcher::emitRect(int slot, double left, double right) {
    const int l = static_cast<int>(std::lround(left)), r = static_cast<int>(std::lround(right));
    if (r <= l) return;
    rects_[static_cast<std::size_t>(slot)].append(
        QRect(l, static_cast<int>(top_), r - l, static_cast<int>(bottom_ - top_)));
}

void BoxBatcher::closeRun(double nextLeft) {
    if (!run_.active) return;
    emitRect(run_.slot, run_.left, std::min(run_.right, nextLeft));
    run_.active = false;
}

void BoxBatcher::closeGroup(double nextLeft) {
    if (!group_.active) return;
    group_.active = false;
    const auto dominant = std::max_element(group_.weight.begin(), group_.weight.end()) - group_.weight.begin();
    const int slot = slotOf(static_cast<BoxKind>(dominant), group_.group[static_cast<std::size_t>(dominant)]);
    const double left = group_.column;
    // A folded group never reaches into the next thing drawn, so a bubble right after it
    // (nextLeft) stays visible and rects of different colours never overpaint each other.
    const double right = std::max(left + 1, std::min(group_.right, nextLeft));
    if (run_.active && run_.slot == slot && run_.right >= left) {
        run_.right = right;
        return;
    }
    closeRun(left);
    run_ = {true, slot, left, right};
}

void BoxBatcher::addLane(const std::vector<TimelineBox>& boxes, const VisibleWindow& window, double top, double bottom,
                         bool bubbles, double makespan) {
    top_ = top;
    bottom_ = bottom;
    group_ = {};
    run_ = {};
    // Pixels far outside the plot are clamped: QPainter misbehaves with huge coordinates
    // when the user zooms deep into one box.
    const double minX = window.clipLeft - 4, maxX = window.clipRight + 4;
    auto px = [&](double key) { return std::clamp(window.toPixel(key), minX, maxX); };

    auto it = firstEndingAfter(boxes, window.lowKey);
    double idleSince = it == boxes.begin() ? 0.0 : std::prev(it)->end;
    auto addBubble = [&](double fromKey, double toKey) {
        if (!bubbles) return;
        const double left = std::round(px(fromKey)), right = std::round(px(toKey));
        if (right - left >= 2)
            bubbles_.append(QRect(static_cast<int>(left), static_cast<int>(top), static_cast<int>(right - left),
                                  static_cast<int>(bottom - top)));
    };

    for (; it != boxes.end() && it->start < window.highKey; ++it) {
        const TimelineBox& box = *it;
        if (box.start > idleSince) addBubble(idleSince, box.start);
        idleSince = std::max(idleSince, box.end);
        const double x0 = px(box.start), x1 = px(box.end);
        if (x1 - x0 >= kFoldPx) {
            const double left = std::round(x0);
            closeGroup(left);
            closeRun(left);
            // One pixel of air between neighbours, so two forwards in a row read as two.
            const double right = std::max(left + 1, std::round(x1) - (x1 - x0 >= 5 ? 1 : 0));
            const int slot = slotOf(box.kind, colorGroupOf(box, mode_));
            emitRect(slot, left, right);
            if (box.microbatch >= 0 && right - left >= kMinLabelPx)
                labels_.push_back({QRectF(QPointF(left, top), QPointF(right, bottom)), box.microbatch, box.kind, slot});
            continue;
        }
        const int column = static_cast<int>(std::floor(x0));
        if (!group_.active || column != group_.column) {
            closeGroup(column);
            group_ = {};
            group_.active = true;
            group_.column = column;
            group_.right = column + 1;
        }
        group_.right = std::max(group_.right, x1);
        // Weighted by time, not count: a column with one long backward and three slivers
        // of forward shows the backward.
        const auto k = static_cast<std::size_t>(box.kind);
        group_.weight[k] += box.end - box.start;
        if (box.end - box.start > group_.longest[k]) {
            group_.longest[k] = box.end - box.start;
            group_.group[k] = colorGroupOf(box, mode_);
        }
    }
    closeGroup(maxX);
    closeRun(maxX);
    if (makespan > idleSince && idleSince < window.highKey) addBubble(idleSince, makespan);
}

}  // namespace mario::views
