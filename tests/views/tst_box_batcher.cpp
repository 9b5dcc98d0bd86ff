// BoxBatcher: culling to the visible range and folding keep the rect count bounded by
// lanes × pixel width, while wide boxes are drawn one rect each and gaps stay visible.
#include <QtTest>

#include "tests/views/ViewTestPlans.h"
#include "views/BoxBatcher.h"

using namespace mario::views;

namespace {

VisibleWindow windowFor(double lowKey, double highKey, double leftPx, double widthPx) {
    VisibleWindow w;
    w.lowKey = lowKey;
    w.highKey = highKey;
    w.clipLeft = leftPx;
    w.clipRight = leftPx + widthPx;
    const double scale = widthPx / (highKey - lowKey);
    w.toPixel = {leftPx - lowKey * scale, scale};
    return w;
}

int addAll(BoxBatcher& batcher, const Timeline& timeline, const VisibleWindow& window, bool bubbles = false) {
    batcher.clear();
    for (std::size_t l = 0; l < timeline.lanes.size(); ++l)
        batcher.addLane(timeline.lanes[l], window, 20.0 * l, 20.0 * l + 15, bubbles, timeline.makespan);
    return batcher.rectCount();
}

}  // namespace

class BoxBatcherTest : public QObject {
    Q_OBJECT
private slots:
    void hundredThousandBoxesStayBounded();
    void zoomedInDrawsEachVisibleBoxOnce();
    void foldingKeepsGapsVisible();
    void bubblesCoverIdleTime();
};

void BoxBatcherTest::hundredThousandBoxesStayBounded() {
    const Timeline timeline = mario::viewtest::syntheticTimeline(32, 3125);
    QCOMPARE(timeline.boxCount(), std::size_t(100000));
    const int width = 1500;
    BoxBatcher batcher;
    const int rects = addAll(batcher, timeline, windowFor(0, timeline.makespan, 80, width));
    QVERIFY2(rects <= 32 * width, qPrintable(QString::number(rects)));
    QVERIFY(rects >= 32);  // every lane drew something
    // Folded rects still cover the lanes: together they span most of each lane's busy width.
    double covered = 0;
    for (int k = 0; k < static_cast<int>(BoxKind::Count); ++k)
        for (const QRect& r : batcher.rects(static_cast<BoxKind>(k))) covered += r.width();
    QVERIFY(covered > 0.8 * 32 * width);
}

void BoxBatcherTest::zoomedInDrawsEachVisibleBoxOnce() {
    const Timeline timeline = mario::viewtest::syntheticTimeline(4, 2000);
    // A 20 ms window over ~1 ms boxes at 1000 px: every box is ~50 px, none folded.
    const double low = 500, high = 520;
    BoxBatcher batcher;
    const int rects = addAll(batcher, timeline, windowFor(low, high, 0, 1000));
    int expected = 0;  // linear scan, independent of the binary search
    for (const auto& lane : timeline.lanes)
        for (const TimelineBox& box : lane)
            if (box.end > low && box.start < high) ++expected;
    QCOMPARE(rects, expected);
    QVERIFY(!batcher.labels().empty());
}

void BoxBatcherTest::foldingKeepsGapsVisible() {
    // Two dense clusters of 1000 tiny boxes, 50 ms apart, in a 100-px-wide window of 100 ms.
    Timeline timeline;
    timeline.lanes.resize(1);
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 1000; ++i) {
            TimelineBox box;
            box.start = c * 60.0 + i * 0.01;
            box.end = box.start + 0.01;
            box.program_index = c * 1000 + i;
            box.kind = BoxKind::Backward;
            timeline.lanes[0].push_back(box);
        }
    timeline.makespan = 70;
    BoxBatcher batcher;
    const int rects = addAll(batcher, timeline, windowFor(0, 100, 0, 100));
    QCOMPARE(rects, 2);  // each cluster folds into one run of columns
    const auto& list = batcher.rects(BoxKind::Backward);
    QVERIFY(list[0].left() + list[0].width() <= 11);  // cluster 0 covers [0, 10] ms = [0, 10] px
    QVERIFY(list[1].left() >= 59);
}

void BoxBatcherTest::bubblesCoverIdleTime() {
    Timeline timeline;
    timeline.lanes.resize(1);
    timeline.lanes[0] = {TimelineBox{10, 20, 0, 0}, TimelineBox{50, 60, 0, 1}};
    timeline.makespan = 100;
    BoxBatcher batcher;
    addAll(batcher, timeline, windowFor(0, 100, 0, 100), true);
    // Idle [0,10], [20,50], [60,100] at one pixel per ms.
    QCOMPARE(batcher.bubbles().size(), 3);
    QCOMPARE(batcher.bubbles()[1].left(), 20);
    QCOMPARE(batcher.bubbles()[1].left() + batcher.bubbles()[1].width(), 50);
}

QTEST_GUILESS_MAIN(BoxBatcherTest)
#include "tst_box_batcher.moc"
