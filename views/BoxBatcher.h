#pragma once
// Turns the visible part of a timeline into a few rectangle lists, one per colour slot (a box
// kind, times the colour group of views/ColorMode.h when boxes are coloured by micro-batch,
// chunk or direction), so the Gantt plottable issues one drawRects per colour (docs/architecture.md, after Tracy and Qt
// Creator's tracing view): each lane is binary-searched to the visible time range, and boxes
// narrower than kFoldPx are folded so one pixel column of a lane holds at most one rect.
// The drawing cost is then bounded by lanes × pixel width, however many boxes there are.
// Plain geometry, no painter: the plottable paints, tests count.
#include <QRect>
#include <QRectF>
#include <QVector>
#include <array>
#include <vector>

#include "views/ColorMode.h"
#include "views/Timeline.h"

namespace mario::views {

// A linear key (time) → pixel map, the form QCPAxis::coordToPixel takes on a linear axis.
struct KeyToPixel {
    double offset = 0;
    double scale = 1;
    double operator()(double key) const { return offset + scale * key; }
};

// A box wide enough that its micro-batch number might fit; the plottable measures the text.
struct BoxLabel {
    QRectF rect;
    int microbatch = -1;
    BoxKind kind = BoxKind::Forward;
    int slot = 0;  // the colour slot it was drawn in (its text colour follows)
};

// The visible window of the plot in both units.
struct VisibleWindow {
    double lowKey = 0, highKey = 0;      // time range
    double clipLeft = 0, clipRight = 0;  // the same range in pixels
    KeyToPixel toPixel;
};

class BoxBatcher {
public:
    static constexpr double kFoldPx = 3.0;       // narrower boxes are folded
    static constexpr double kMinLabelPx = 10.0;  // narrower boxes never get a number

    // Which colours boxes are sorted into; kind until set. Takes effect from the next clear().
    void setColorMode(ColorMode mode);
    ColorMode colorMode() const { return mode_; }
    // Slot = group × kinds + kind: in kind mode the slot is the kind itself.
    int slotCount() const { return static_cast<int>(rects_.size()); }
    static int slotOf(BoxKind kind, int group) {
        return group * static_cast<int>(BoxKind::Count) + static_cast<int>(kind);
    }
    static BoxKind kindOfSlot(int slot) { return static_cast<BoxKind>(slot % static_cast<int>(BoxKind::Count)); }
    static int groupOfSlot(int slot) { return slot / static_cast<int>(BoxKind::Count); }

    void clear();
    // Adds the visible boxes of one lane, drawn between pixel rows top and bottom. With
    // bubbles, also the idle stretches in [0, makespan] that are at least 2 px wide.
    void addLane(const std::vector<TimelineBox>& boxes, const VisibleWindow& window, double top, double bottom,
                 bool bubbles, double makespan);

    const QVector<QRect>& slotRects(int slot) const { return rects_[static_cast<std::size_t>(slot)]; }
    // The rects of a kind's first colour group: all of them in kind mode.
    const QVector<QRect>& rects(BoxKind kind) const { return slotRects(slotOf(kind, 0)); }
    const std::vector<BoxLabel>& labels() const { return labels_; }
    const QVector<QRect>& bubbles() const { return bubbles_; }
    // Box rectangles (not bubbles) produced since clear().
    int rectCount() const;

    // The first box of a lane that ends after `key` (lanes are sorted and do not overlap,
    // so ends rise with starts). O(log n).
    static std::vector<TimelineBox>::const_iterator firstEndingAfter(const std::vector<TimelineBox>& boxes, double key);

private:
    // Boxes starting in one pixel column, folded into one rect of the kind covering most,
    // in the colour group of that kind's longest box there.
    struct Group {
        bool active = false;
        int column = 0;
        double right = 0;
        std::array<double, static_cast<std::size_t>(BoxKind::Count)> weight{};
        std::array<double, static_cast<std::size_t>(BoxKind::Count)> longest{};
        std::array<int, static_cast<std::size_t>(BoxKind::Count)> group{};
    };
    // Neighbouring folded columns of the same slot merge into one wider rect.
    struct Run {
        bool active = false;
        int slot = 0;
        double left = 0, right = 0;
    };

    void closeGroup(double nextLeft);
    void closeRun(double nextLeft);
    void emitRect(int slot, double left, double right);

    ColorMode mode_ = ColorMode::Kind;
    // One list per slot. Whole pixels: QPainter's raster engine fills integer rects on a
    // fast path.
    std::vector<QVector<QRect>> rects_ = std::vector<QVector<QRect>>(static_cast<std::size_t>(BoxKind::Count));
    std::vector<BoxLabel> labels_;
    QVector<QRect> bubbles_;
    Group group_;
    Run run_;
    double top_ = 0, bottom_ = 0;
};

}  // namespace mario::views
