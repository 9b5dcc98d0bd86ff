// GanttView navigation and modes (issue 14): looking around never edits. A drag that starts
// on a box pans outside edit mode; edit mode (or Ctrl) drags boxes, with the drop checker's
// verdict on the ghost; W/A/S/D zoom and pan; Ctrl+wheel and +/− change the row height with
// a lane scroll bar; Shift+drag measures. Expected ranges are computed from the axes and the
// 1F1B closed form, never read back from the navigation itself.
#include <QScrollBar>
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "tests/views/ShownGantt.h"
#include "tests/views/ViewTestPlans.h"
#include "views/GanttNavigation.h"
#include "views/GanttPlottable.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::views;
using mario::viewtest::msPerPixel;
using mario::viewtest::showView;

namespace {

// Plot pixel of (time, lane), from the axes alone.
QPoint plotPixel(const GanttView& view, double time, double lane) {
    return {qRound(view.plot()->xAxis->coordToPixel(time)), qRound(view.plot()->yAxis->coordToPixel(lane))};
}

void wheel(QWidget* plot, QPoint at, int notches, Qt::KeyboardModifiers modifiers) {
    QWheelEvent event(at, plot->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, modifiers,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(plot, &event);
}

void drag(QWidget* plot, QPoint from, QPoint to, Qt::KeyboardModifiers modifiers = {}) {
    QTest::mousePress(plot, Qt::LeftButton, modifiers, from);
    QTest::mouseMove(plot, (from + to) / 2);
    QTest::mouseMove(plot, to);
    QTest::mouseRelease(plot, Qt::LeftButton, modifiers, to);
}

// Device 1's forward of micro-batch 1 in unit-cost 1F1B 4×4: the box every drag test grabs.
int forward11(const Plan& plan) {
    const auto& program = plan.devices[1].program;
    const auto it = std::find(program.begin(), program.end(), Instruction{Op::Forward, 1, 1});
    return static_cast<int>(it - program.begin());
}

}  // namespace

class GanttNavigationTest : public QObject {
    Q_OBJECT
private slots:
    void init() {
        plan_ = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
        sim_ = viewtest::simulate(plan_);
    }

    void dragOnABoxPansOutsideEditMode() {
        auto view = showView(buildTimeline(plan_, sim_));
        QVERIFY(!view->editMode());
        QSignalSpy moves(view.get(), &GanttView::moveRequested);
        const QPoint start = view->plot()->mapFrom(view.get(), view->boxCenter({1, forward11(plan_)}));
        const QCPRange before = view->plot()->xAxis->range();
        const double perPixel = msPerPixel(*view);
        drag(view->plot(), start, start + QPoint(100, 0));
        QCOMPARE(moves.count(), 0);
        QVERIFY(!view->isDraggingBox());
        // The content followed the mouse 100 px to the right: earlier times came into view.
        QVERIFY(std::abs((before.lower - view->plot()->xAxis->range().lower) - 100 * perPixel) < 1.5 * perPixel);
        QVERIFY(view->userZoomed());
    }

    void ctrlDragEditsOutsideEditMode() {
        auto view = showView(buildTimeline(plan_, sim_));
        QSignalSpy moves(view.get(), &GanttView::moveRequested);
        const QPoint start = view->plot()->mapFrom(view.get(), view->boxCenter({1, forward11(plan_)}));
        drag(view->plot(), start, start + QPoint(80, 0), Qt::ControlModifier);
        QCOMPARE(moves.count(), 1);
        QCOMPARE(moves.first().at(1).toInt(), forward11(plan_));
    }

    void dropCheckerColoursTheGhostAndNamesTheReason() {
        auto view = showView(buildTimeline(plan_, sim_));
        view->setEditMode(true);
        // Refuse drops later than t = 6: the checker is the app's; the view only shows it.
        QList<double> asked;
        view->setDropChecker([&asked](int lane, int, double time) {
            asked.append(time);
            return lane == 1 && time > 6 ? QStringLiteral("would deadlock") : QString();
        });
        QWidget* plot = view->plot();
        const int index = forward11(plan_);
        const QPoint start = plot->mapFrom(view.get(), view->boxCenter({1, index}));
        QTest::mousePress(plot, Qt::LeftButton, {}, start);
        const QPoint early = plotPixel(*view, 4.5, 1);
        QTest::mouseMove(plot, early);
        QVERIFY(view->isDraggingBox());
        QVERIFY(view->boxesPlottable()->ghostValid());
        QVERIFY(view->dropRefusal().isEmpty());
        QVERIFY(std::abs(asked.last() - 4.5) < 1.5 * msPerPixel(*view));
        const QPoint late = plotPixel(*view, 9.5, 1);
        QTest::mouseMove(plot, late);
        QVERIFY(!view->boxesPlottable()->ghostValid());
        QCOMPARE(view->dropRefusal(), QStringLiteral("would deadlock"));
        QTest::mouseRelease(plot, Qt::LeftButton, {}, late);
        QVERIFY(view->dropRefusal().isEmpty());  // gone with the ghost
    }

    void wasdZoomAndPanTime() {
        auto view = showView(buildTimeline(plan_, sim_));
        QWidget* plot = view->plot();
        plot->setFocus();
        const QCPRange start = view->plot()->xAxis->range();
        QTest::keyClick(plot, Qt::Key_W);  // zoom in about the centre by one wheel notch
        QCPRange now = view->plot()->xAxis->range();
        QVERIFY(std::abs(now.size() - 0.85 * start.size()) < 1e-9 * start.size());
        QVERIFY(std::abs(now.center() - start.center()) < 1e-9 * start.size());
        const QCPRange zoomed = now;
        QTest::keyClick(plot, Qt::Key_D);  // a fifth of the view later
        now = view->plot()->xAxis->range();
        QVERIFY(std::abs(now.lower - (zoomed.lower + 0.2 * zoomed.size())) < 1e-9 * start.size());
        QTest::keyClick(plot, Qt::Key_A);
        QTest::keyClick(plot, Qt::Key_A);
        now = view->plot()->xAxis->range();
        QVERIFY(std::abs(now.lower - (zoomed.lower - 0.2 * zoomed.size())) < 1e-9 * start.size());
        QTest::keyClick(plot, Qt::Key_S);
        QVERIFY(std::abs(view->plot()->xAxis->range().size() - start.size()) < 1e-9 * start.size());
        QVERIFY(view->userZoomed());
        view->fitToView();
        QVERIFY(!view->userZoomed());
    }

    void rowZoomShowsTallerLanesWithAScrollBar() {
        auto view = showView(viewtest::syntheticTimeline(32, 40), {1000, 420});
        GanttNavigation* nav = view->navigation();
        auto* scroll = view->findChild<QScrollBar*>("laneScroll");
        QVERIFY(scroll);
        QCOMPARE(nav->visibleLanes(), 32);
        QVERIFY(scroll->isHidden());
        QWidget* plot = view->plot();
        const QPoint middle = view->plot()->axisRect()->rect().center();
        wheel(plot, middle, 1, Qt::ControlModifier);  // taller rows: fewer lanes
        const int afterOne = nav->visibleLanes();
        QVERIFY(afterOne < 32);
        QVERIFY(scroll->isVisible());
        QCOMPARE(scroll->maximum(), 32 - afterOne);
        QCOMPARE(view->plot()->yAxis->range().size(), double(afterOne));
        for (int i = 0; i < 20; ++i) QTest::keyClick(plot, Qt::Key_Plus);
        QCOMPARE(nav->visibleLanes(), 1);  // never fewer than one
        for (int i = 0; i < 40; ++i) QTest::keyClick(plot, Qt::Key_Minus);
        QCOMPARE(nav->visibleLanes(), 32);  // never more than there are
        QVERIFY(scroll->isHidden());

        nav->setVisibleLanes(8);
        QCOMPARE(nav->firstVisibleLane(), 0);
        wheel(plot, middle, -3, Qt::ShiftModifier);  // scroll down three lanes
        QCOMPARE(nav->firstVisibleLane(), 3);
        QCOMPARE(scroll->value(), 3);
        scroll->setValue(24);  // the scroll bar moves the lanes too, to the last eight
        QCOMPARE(view->plot()->yAxis->range().lower, 23.5);
        wheel(plot, middle, -5, Qt::ShiftModifier);  // and never past the last lane
        QCOMPARE(nav->firstVisibleLane(), 24);
        // Eight rows are tall enough for a label each: every visible device is named.
        view->plot()->replot();
        auto ticker = view->plot()->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
        QVERIFY(ticker);
        for (int lane = 24; lane < 32; ++lane)
            QCOMPARE(ticker->ticks().value(lane), QStringLiteral("device %1").arg(lane));
    }

    void shiftDragMeasuresATimeRange() {
        auto view = showView(buildTimeline(plan_, sim_));
        QSignalSpy moves(view.get(), &GanttView::moveRequested);
        view->setEditMode(true);  // even in edit mode, and starting on a box, Shift measures
        QWidget* plot = view->plot();
        const QCPRange before = view->plot()->xAxis->range();
        const QPoint from = plotPixel(*view, 2.5, 1);  // on device 1's first forward
        QVERIFY(view->boxAt(view->plot()->mapTo(view.get(), from)));
        const QPoint to = plotPixel(*view, 9.5, 1);
        drag(plot, from, to, Qt::ShiftModifier);
        QCOMPARE(moves.count(), 0);
        QCOMPARE(view->plot()->xAxis->range(), before);
        const auto measured = view->navigation()->measurement();
        QVERIFY(measured.has_value());
        const double tolerance = 1.5 * msPerPixel(*view);
        QVERIFY(std::abs(measured->first - 2.5) < tolerance);
        QVERIFY(std::abs(measured->second - 9.5) < tolerance);
        plot->setFocus();
        QTest::keyClick(plot, Qt::Key_Escape);
        QVERIFY(!view->navigation()->measurement().has_value());
    }

private:
    Plan plan_;
    SimResult sim_;
};

QTEST_MAIN(GanttNavigationTest)
#include "tst_gantt_navigation.moc"
