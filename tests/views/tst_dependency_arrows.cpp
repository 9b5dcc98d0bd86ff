// Dependency arrows: which arrows a box gets, in time/lane coordinates worked out by hand,
// and that the plottable draws them.
#include <QtTest>
#include <qcustomplot.h>

#include "tests/common/ProgramLookup.h"
#include "tests/views/ViewTestPlans.h"
#include "views/DependencyArrows.h"
#include "views/GanttPlottable.h"

using namespace mario;
using namespace mario::views;

namespace {

// 1F1B, 2 devices, 2 micro-batches, F = 1, B = 2, latency 0.5. By hand:
//   device 0: F0 [0,1]  F1 [1,2]  wait [2,5]  B0 [5,7]  wait [7,8]  B1 [8,10]
//   device 1: wait [0,1.5]  F0 [1.5,2.5]  B0 [2.5,4.5]  F1 [4.5,5.5]  B1 [5.5,7.5]
Plan latencyPlan() {
    auto plan = test::makeUnitPlan(Scheme::OneFOneB, 2, 2, 1, {}, LinkSpec{0.5, 0});
    if (!plan) qFatal("%s", plan.error().message.c_str());
    return std::move(plan).value();
}

BoxRef ref(const Plan& plan, int device, const char* action) {
    const int index = test::indexOf(plan, device, action);
    if (index < 0) qFatal("no %s on device %d", action, device);
    return {device, index};
}

// The darkest pixel around `at`: an antialiased 1.6 px line may straddle pixel centres.
int darkest(const QImage& image, QPoint at) {
    int lightness = 255;
    for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
            lightness = std::min(lightness, image.pixelColor(at + QPoint(dx, dy)).lightness());
    return lightness;
}

}  // namespace

class DependencyArrowsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void computeBoxGetsWhatItReadsAndFeeds();
    void waitBoxGetsTheMessageThatReleasedIt();
    void firstAndLastStagesHaveOneSide();
    void plottableDrawsArrows();

private:
    Plan plan_;
    Timeline timeline_;
};

void DependencyArrowsTest::initTestCase() {
    plan_ = latencyPlan();
    timeline_ = buildTimeline(plan_, viewtest::simulate(plan_));
    QCOMPARE(timeline_.makespan, 10.0);
}

void DependencyArrowsTest::computeBoxGetsWhatItReadsAndFeeds() {
    // Device 1's B0 reads nothing from another device (the last stage) but feeds device 0's
    // B0: sent when it ends at 4.5, read when device 0's B0 starts at 5.
    QCOMPARE(dependencyArrows(timeline_, ref(plan_, 1, "1B0")),
             (std::vector<Arrow>{{4.5, 1, 5.0, 0, Arrow::Role::Outgoing}}));
    // Device 0's B0 reads that gradient.
    QCOMPARE(dependencyArrows(timeline_, ref(plan_, 0, "0B0")),
             (std::vector<Arrow>{{4.5, 1, 5.0, 0, Arrow::Role::Incoming}}));
    // Device 1's F1 reads the activation sent at 2 (it only asks at 4.5) and feeds nothing
    // forward; its gradient goes out from B1, not from F1.
    QCOMPARE(dependencyArrows(timeline_, ref(plan_, 1, "1F1")),
             (std::vector<Arrow>{{2.0, 0, 4.5, 1, Arrow::Role::Incoming}}));
}

void DependencyArrowsTest::waitBoxGetsTheMessageThatReleasedIt() {
    // Device 0 waits [7,8] for B1's gradient, sent by device 1 at 7.5: the arrow ends at the
    // wait's end, when the data arrived.
    const BoxRef wait = ref(plan_, 0, "0RECV_B1");
    const TimelineBox* box = timeline_.find(wait);
    QVERIFY(box);
    QCOMPARE(box->kind, BoxKind::Wait);
    QCOMPARE(dependencyArrows(timeline_, wait), (std::vector<Arrow>{{7.5, 1, 8.0, 0, Arrow::Role::Incoming}}));
}

void DependencyArrowsTest::firstAndLastStagesHaveOneSide() {
    // Device 0's F0 feeds device 1's F0 (sent at 1, read at 1.5) and reads nothing.
    QCOMPARE(dependencyArrows(timeline_, ref(plan_, 0, "0F0")),
             (std::vector<Arrow>{{1.0, 0, 1.5, 1, Arrow::Role::Outgoing}}));
    // Device 0's B1 reads device 1's gradient and feeds no one (the first stage).
    QCOMPARE(dependencyArrows(timeline_, ref(plan_, 0, "0B1")),
             (std::vector<Arrow>{{7.5, 1, 8.0, 0, Arrow::Role::Incoming}}));
    // Not a box of the timeline: no arrows.
    QVERIFY(dependencyArrows(timeline_, BoxRef{5, 0}).empty());
}

void DependencyArrowsTest::plottableDrawsArrows() {
    QCustomPlot plot;
    plot.resize(800, 300);
    auto* boxes = new GanttPlottable(plot.xAxis, plot.yAxis);
    boxes->setTimeline(&timeline_);
    plot.xAxis->setRange(0, 10);
    plot.yAxis->setRange(-0.5, 1.5);
    plot.xAxis->grid()->setVisible(false);
    plot.yAxis->grid()->setVisible(false);
    const QImage before = plot.toPixmap(800, 300).toImage();  // also lays the axes out
    // Between the lanes, halfway along device 1's B0 → device 0's B0 arrow (4.5 → 5): air
    // between the boxes, so background until the arrow is drawn.
    const QPoint between(qRound(plot.xAxis->coordToPixel(4.75)), qRound(plot.yAxis->coordToPixel(0.5)));
    boxes->setArrows(dependencyArrows(timeline_, ref(plan_, 0, "0B0")));
    QCOMPARE(boxes->arrows().size(), std::size_t(1));
    const QImage after = plot.toPixmap(800, 300).toImage();
    QVERIFY(darkest(before, between) > 200);
    QVERIFY2(darkest(after, between) < 140, qPrintable(QString::number(darkest(after, between))));
    boxes->setArrows({});
    QVERIFY(darkest(plot.toPixmap(800, 300).toImage(), between) > 200);
}

QTEST_MAIN(DependencyArrowsTest)
#include "tst_dependency_arrows.moc"
