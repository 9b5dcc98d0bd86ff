// The critical path on the Gantt: the boxes buildTimeline marks (worked out by hand for 1F1B
// 4×4 in tests/core/critical_path_test.cpp) and how the plottable shows them: the path in
// full colour with an outline, every other box washed out.
#include <QtTest>
#include <qcustomplot.h>

#include "tests/common/ProgramLookup.h"
#include "tests/views/ViewTestPlans.h"
#include "views/ColorMode.h"
#include "views/GanttPlottable.h"

using namespace mario;
using namespace mario::views;

namespace {

BoxRef ref(const Plan& plan, int device, const char* action) {
    const int index = test::indexOf(plan, device, action);
    if (index < 0) qFatal("no %s on device %d", action, device);
    return {device, index};
}

// Forward's colour #0072B2 taken 72 % of the way to white, by hand: 0 + 0.72·255, 114 +
// 0.72·141, 178 + 0.72·77.
const QColor kDimmedForward(qRound(0.72 * 255), qRound(114 + 0.72 * 141), qRound(178 + 0.72 * 77));

bool near(const QColor& a, const QColor& b) {
    return std::abs(a.red() - b.red()) <= 1 && std::abs(a.green() - b.green()) <= 1 &&
           std::abs(a.blue() - b.blue()) <= 1;
}

}  // namespace

class CriticalPathViewTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void timelineCarriesThePath();
    void pathStandsOutTheRestIsDimmed();

private:
    Plan plan_;
    Timeline timeline_;
};

void CriticalPathViewTest::initTestCase() {
    plan_ = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
    timeline_ = buildTimeline(plan_, viewtest::simulate(plan_));
}

void CriticalPathViewTest::timelineCarriesThePath() {
    // Down the pipeline with micro-batch 0's forward, device 3's eight boxes back to back,
    // then up with micro-batch 3's backward.
    const std::vector<BoxRef> expected{
        ref(plan_, 0, "0F0"), ref(plan_, 1, "1F0"), ref(plan_, 2, "2F0"), ref(plan_, 3, "3F0"), ref(plan_, 3, "3B0"),
        ref(plan_, 3, "3F1"), ref(plan_, 3, "3B1"), ref(plan_, 3, "3F2"), ref(plan_, 3, "3B2"), ref(plan_, 3, "3F3"),
        ref(plan_, 3, "3B3"), ref(plan_, 2, "2B3"), ref(plan_, 1, "1B3"), ref(plan_, 0, "0B3")};
    QCOMPARE(timeline_.criticalPath, expected);
    for (const BoxRef& box : timeline_.criticalPath) QVERIFY(timeline_.find(box));
}

void CriticalPathViewTest::pathStandsOutTheRestIsDimmed() {
    QCustomPlot plot;
    plot.resize(900, 400);
    plot.xAxis->grid()->setVisible(false);
    plot.yAxis->grid()->setVisible(false);
    auto* boxes = new GanttPlottable(plot.xAxis, plot.yAxis);
    boxes->setTimeline(&timeline_);
    plot.xAxis->setRange(0, timeline_.makespan);
    plot.yAxis->setRange(-0.5, 3.5);
    // Sampled a little inside each box's left edge (the micro-batch number sits in the middle).
    auto sample = [&](const QImage& image, double time, int lane) {
        return image.pixelColor(qRound(plot.xAxis->coordToPixel(time)), qRound(plot.yAxis->coordToPixel(lane)));
    };
    boxes->setCriticalPath(timeline_.criticalPath);
    QCOMPARE(boxes->criticalPath().size(), timeline_.criticalPath.size());
    const QImage image = plot.toPixmap(900, 400).toImage();
    // Device 0's F0 [0,1] is on the path: full forward colour. Its F1 [1,2] is not: dimmed.
    QCOMPARE(sample(image, 0.3, 0), colorOf(BoxKind::Forward));
    QVERIFY2(near(sample(image, 1.3, 0), kDimmedForward), qPrintable(sample(image, 1.3, 0).name()));
    // Device 3's F1 [6,7] is on the path.
    QCOMPARE(sample(image, 6.3, 3), colorOf(BoxKind::Forward));
    // The outline: a dark pen just outside device 0's F0's left edge, inside the lane.
    const QColor edge = image.pixelColor(qRound(plot.xAxis->coordToPixel(0)), qRound(plot.yAxis->coordToPixel(0)));
    QVERIFY2(edge.lightness() < 80, qPrintable(edge.name()));
    // Cleared: everything back to full colour.
    boxes->setCriticalPath({});
    QCOMPARE(sample(plot.toPixmap(900, 400).toImage(), 1.3, 0), colorOf(BoxKind::Forward));
    // In micro-batch colours the path keeps its own: device 3's F1 is micro-batch 1's orange.
    boxes->setColorMode(ColorMode::Microbatch);
    boxes->setCriticalPath(timeline_.criticalPath);
    QCOMPARE(sample(plot.toPixmap(900, 400).toImage(), 6.3, 3), QColor(0xF2, 0x8E, 0x2B));
}

QTEST_MAIN(CriticalPathViewTest)
#include "tst_critical_path.moc"
