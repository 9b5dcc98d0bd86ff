// The overview strip under the Gantt (issue 14: "a minimap or overview strip"): its rectangle
// covers what the main view shows, a click centres the main view, dragging the rectangle pans
// it, the wheel zooms it, and the strip's scale follows a new schedule. Driven with real mouse
// events on the strip. Expected pixels and times come from the strip's contents width and the
// 1F1B closed form (makespan (m + p − 1)(F + B) with F = 1, B = 2), never from the strip's own
// mapping.
#include <QVBoxLayout>
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "tests/views/ViewTestPlans.h"
#include "views/GanttNavigation.h"
#include "views/GanttOverview.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::views;

namespace {

// Unit-cost 1F1B on 4 devices: (m + 3) × 3 time units.
constexpr double makespanOf1F1B(int microbatches) { return (microbatches + 3) * 3.0; }

Timeline oneFOneB(int microbatches) {
    const Plan plan = viewtest::unitPlan(Scheme::OneFOneB, 4, microbatches);
    return buildTimeline(plan, viewtest::simulate(plan));
}

// The Gantt with its strip under it, laid out as the main window lays them out.
struct ShownStrip {
    std::unique_ptr<QWidget> window = std::make_unique<QWidget>();
    GanttView* view = nullptr;
    GanttOverview* strip = nullptr;
};

std::unique_ptr<ShownStrip> showStrip(Timeline timeline) {
    auto shown = std::make_unique<ShownStrip>();
    auto* layout = new QVBoxLayout(shown->window.get());
    layout->setContentsMargins(0, 0, 0, 0);
    shown->view = new GanttView(shown->window.get());
    shown->strip = new GanttOverview(shown->view, shown->window.get());
    layout->addWidget(shown->view, 1);
    layout->addWidget(shown->strip);
    shown->window->resize(1000, 480);
    shown->window->show();
    if (!QTest::qWaitForWindowExposed(shown->window.get())) qWarning("window not exposed");
    shown->view->setTimeline(std::move(timeline));
    shown->view->plot()->replot();  // lays the plot out: the strip lines up with its axis rect
    shown->strip->repaint();
    return shown;
}

// Strip pixel of a time, from the contents rect alone.
double expectedX(const GanttOverview& strip, double time, double makespan) {
    const QRect area = strip.contentsRect();
    return area.x() + time * area.width() / makespan;
}

double pixelTime(const GanttOverview& strip, double makespan) { return makespan / strip.contentsRect().width(); }

// The leftmost and rightmost columns painted in the rectangle's outline colour.
std::pair<int, int> outlineColumns(GanttOverview& strip) {
    const QImage image = strip.grab().toImage().convertToFormat(QImage::Format_RGB32);
    const QRgb outline = qRgb(0x30, 0x60, 0xC0);
    int left = image.width(), right = -1;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (image.pixel(x, y) == outline) {
                left = std::min(left, x);
                right = std::max(right, x);
            }
    return {left, right};
}

void wheel(QWidget* widget, QPoint at, int notches) {
    QWheelEvent event(at, widget->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &event);
}

}  // namespace

class GanttOverviewTest : public QObject {
    Q_OBJECT
private slots:
    void theStripLinesUpWithTheChartsTimeAxis() {
        auto shown = showStrip(oneFOneB(4));
        QCOMPARE(shown->view->timeline().makespan, makespanOf1F1B(4));
        QWidget* window = shown->window.get();
        const QRect axis = shown->view->plot()->axisRect()->rect();
        const QPoint axisLeft = shown->view->plot()->mapTo(window, axis.topLeft());
        const QPoint stripLeft = shown->strip->mapTo(window, shown->strip->contentsRect().topLeft());
        QCOMPARE(stripLeft.x(), axisLeft.x());
        QCOMPARE(shown->strip->contentsRect().width(), axis.width());
        QVERIFY(shown->strip->height() <= 60);
    }

    void theRectangleCoversTheZoomedRange() {
        const double makespan = makespanOf1F1B(4);
        auto shown = showStrip(oneFOneB(4));
        GanttOverview& strip = *shown->strip;
        shown->view->setTimeRange(6, 12);
        const QRectF rect = strip.viewportRect();
        QVERIFY2(std::abs(rect.left() - expectedX(strip, 6, makespan)) < 0.5, qPrintable(QString::number(rect.left())));
        QVERIFY(std::abs(rect.right() - expectedX(strip, 12, makespan)) < 0.5);
        // Every device is on screen: the rectangle spans the strip's height.
        QCOMPARE(rect.top(), double(strip.contentsRect().top()));
        QCOMPARE(rect.bottom(), double(strip.contentsRect().top() + strip.contentsRect().height()));
        // And that is where it is drawn.
        const auto [left, right] = outlineColumns(strip);
        QVERIFY2(std::abs(left - expectedX(strip, 6, makespan)) <= 1.5, qPrintable(QString::number(left)));
        QVERIFY2(std::abs(right - expectedX(strip, 12, makespan)) <= 1.5, qPrintable(QString::number(right)));
    }

    void aClickCentresTheMainView() {
        const double makespan = makespanOf1F1B(4);
        auto shown = showStrip(oneFOneB(4));
        GanttOverview& strip = *shown->strip;
        shown->view->setTimeRange(2, 5);
        const QRect area = strip.contentsRect();
        const QPoint at(area.x() + area.width() * 3 / 4, area.center().y());
        const double time = (at.x() - area.x()) * makespan / area.width();  // 15.75 give or take a pixel
        QTest::mouseClick(&strip, Qt::LeftButton, {}, at);
        const QCPRange range = shown->view->plot()->xAxis->range();
        QVERIFY2(std::abs(range.center() - time) <= pixelTime(strip, makespan),
                 qPrintable(QStringLiteral("centre %1, clicked %2").arg(range.center()).arg(time)));
        QVERIFY(std::abs(range.size() - 3) < 1e-9);  // centred, not zoomed
        QVERIFY(shown->view->userZoomed());          // a later edit keeps this view
    }

    void draggingTheRectanglePansWithoutRedrawingTheBoxes() {
        const double makespan = makespanOf1F1B(4);
        auto shown = showStrip(oneFOneB(4));
        GanttOverview& strip = *shown->strip;
        shown->view->setTimeRange(6, 12);
        strip.repaint();
        const int renders = strip.renderCount();
        QVERIFY(renders >= 1);
        const QPoint from = strip.viewportRect().center().toPoint();
        const int dx = 80;
        QTest::mousePress(&strip, Qt::LeftButton, {}, from);
        QTest::mouseMove(&strip, from + QPoint(dx / 2, 0));
        strip.repaint();
        QTest::mouseMove(&strip, from + QPoint(dx, 0));
        QTest::mouseRelease(&strip, Qt::LeftButton, {}, from + QPoint(dx, 0));
        strip.repaint();
        const double shift = dx * makespan / strip.contentsRect().width();
        const QCPRange range = shown->view->plot()->xAxis->range();
        QVERIFY2(std::abs(range.lower - (6 + shift)) < 1e-6,
                 qPrintable(QStringLiteral("lower %1, expected %2").arg(range.lower).arg(6 + shift)));
        QVERIFY(std::abs(range.upper - (12 + shift)) < 1e-6);
        QVERIFY(std::abs(strip.viewportRect().left() - expectedX(strip, 6 + shift, makespan)) < 0.5);
        QCOMPARE(strip.renderCount(), renders);  // the cached boxes were reused: a pan only repaints
    }

    void theWheelZoomsTheMainViewAboutTheTimeUnderIt() {
        const double makespan = makespanOf1F1B(4);
        auto shown = showStrip(oneFOneB(4));
        GanttOverview& strip = *shown->strip;
        shown->view->setTimeRange(3, 15);
        const QRect area = strip.contentsRect();
        const QPoint at(area.x() + area.width() / 3, area.center().y());
        const double anchor = (at.x() - area.x()) * makespan / area.width();
        const QCPRange before = shown->view->plot()->xAxis->range();
        wheel(&strip, at, 1);
        const QCPRange after = shown->view->plot()->xAxis->range();
        QVERIFY(std::abs(after.size() - 0.85 * before.size()) < 1e-9);
        // The anchor stays where it was on the main view's axis.
        QVERIFY(std::abs((anchor - after.lower) / after.size() - (anchor - before.lower) / before.size()) < 1e-9);
    }

    void zoomedRowsShowAndMoveInTheStrip() {
        auto shown = showStrip(oneFOneB(4));
        GanttOverview& strip = *shown->strip;
        shown->view->navigation()->setVisibleLanes(2);  // devices 0 and 1 of 4
        const QRect area = strip.contentsRect();
        QVERIFY(std::abs(strip.viewportRect().top() - area.top()) < 1e-9);
        QVERIFY(std::abs(strip.viewportRect().bottom() - (area.top() + area.height() / 2.0)) < 1e-9);
        // A click in device 3's row brings the last two devices on screen.
        const QPoint at(area.center().x(), area.top() + area.height() * 7 / 8);
        QTest::mouseClick(&strip, Qt::LeftButton, {}, at);
        QCOMPARE(shown->view->navigation()->firstVisibleLane(), 2);
        QVERIFY(std::abs(strip.viewportRect().top() - (area.top() + area.height() / 2.0)) < 1e-9);
    }

    void theScaleFollowsALongerSchedule() {
        auto shown = showStrip(oneFOneB(4));
        GanttOverview& strip = *shown->strip;
        const int renders = strip.renderCount();
        shown->view->setTimeline(oneFOneB(8));  // 33 time units instead of 21
        const double makespan = makespanOf1F1B(8);
        QCOMPARE(shown->view->timeline().makespan, makespan);
        shown->view->setTimeRange(6, 12);
        const QRectF rect = strip.viewportRect();
        QVERIFY2(std::abs(rect.left() - expectedX(strip, 6, makespan)) < 0.5, qPrintable(QString::number(rect.left())));
        QVERIFY(std::abs(rect.right() - expectedX(strip, 12, makespan)) < 0.5);
        // The old scale would have put t = 12 at 12/21 of the width, not 12/33.
        QVERIFY(std::abs(rect.right() - expectedX(strip, 12, makespanOf1F1B(4))) > 10);
        strip.repaint();
        QCOMPARE(strip.renderCount(), renders + 1);  // the boxes were drawn again, once
        shown->view->setColorMode(ColorMode::Microbatch);
        strip.repaint();
        QCOMPARE(strip.renderCount(), renders + 2);  // and again in the new colours
    }

    // 32 devices × 64 micro-batches of the GPT-3 example: panning reuses the cached boxes.
    void aLargeScheduleRendersOnce() {
        const Plan plan = viewtest::chimeraExample(32, 64);
        auto shown = showStrip(buildTimeline(plan, viewtest::simulate(plan)));
        GanttOverview& strip = *shown->strip;
        strip.repaint();
        const int renders = strip.renderCount();
        const double makespan = shown->view->timeline().makespan;
        shown->view->setTimeRange(0.1 * makespan, 0.2 * makespan);
        QElapsedTimer timer;
        timer.start();
        QWidget* plot = shown->view->plotWidget();
        for (int step = 0; step < 20; ++step) {
            QTest::keyClick(plot, Qt::Key_D);
            strip.repaint();
        }
        QCOMPARE(strip.renderCount(), renders);
        shown->window->grab().save(QStringLiteral("/tmp/gantt_overview_32x64.png"));  // to look at
        qInfo("20 pans with the strip repainted: %lld ms", static_cast<long long>(timer.elapsed()));
        QVERIFY(std::abs(strip.viewportRect().left() -
                         expectedX(strip, shown->view->plot()->xAxis->range().lower, makespan)) < 0.5);
    }
};

QTEST_MAIN(GanttOverviewTest)
#include "tst_gantt_overview.moc"
