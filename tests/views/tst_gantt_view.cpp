// GanttView: hit testing, drag-to-edit, pan and zoom, hover, legend, range keeping, culling.
// Expected boxes and times come from the plan and the 1F1B closed form, not from the view.
#include <QSet>
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "tests/views/ShownGantt.h"
#include "tests/views/ViewTestPlans.h"
#include "views/GanttPlottable.h"
#include "views/GanttView.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"

using namespace mario;
using namespace mario::views;
using mario::viewtest::msPerPixel;
using mario::viewtest::showView;

namespace {

int indexOf(const Plan& plan, int device, Instruction ins) {
    const auto& program = plan.devices[device].program;
    const auto it = std::find(program.begin(), program.end(), ins);
    return it == program.end() ? -1 : static_cast<int>(it - program.begin());
}

// Widget pixel of (time, lane), computed from the axes alone.
QPoint pixelOf(const GanttView& view, double time, double lane) {
    const QPoint plotPos(qRound(view.plot()->xAxis->coordToPixel(time)),
                         qRound(view.plot()->yAxis->coordToPixel(lane)));
    return view.plot()->mapTo(&view, plotPos);
}

}  // namespace

class GanttViewTest : public QObject {
    Q_OBJECT
private slots:
    void init();
    void hitTestFindsTheBoxAtAPixel();
    void boxCenterRoundTripsForEveryBox();
    void gapsHitNothing();
    void dragWithinLaneRequestsMove();
    void dragCancelledByEscapeOrLeavingLane();
    void pressOnEmptySpacePans();
    void wheelZoomsTimeOnly();
    void tooltipNamesTheInstruction();
    void hoverReportsTheBox();
    void legendShowsEachKindPresent();
    void wrappedLegendSurvivesShadingToggles();
    void setTimelineKeepsOrFitsRange();
    void hundredThousandBoxesDrawBounded();

private:
    Plan plan_;
    SimResult sim_;
};

void GanttViewTest::init() {
    plan_ = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
    sim_ = viewtest::simulate(plan_);
}

void GanttViewTest::hitTestFindsTheBoxAtAPixel() {
    auto view = showView(buildTimeline(plan_, sim_));
    // 1F1B with unit forwards and free links: device d runs F of micro-batch 0 during [d, d+1].
    for (int d = 0; d < 4; ++d) {
        const int index = indexOf(plan_, d, {Op::Forward, d, 0});
        QVERIFY(index >= 0);
        const auto hit = view->boxAt(pixelOf(*view, d + 0.5, d));
        QVERIFY2(hit.has_value(), qPrintable(QStringLiteral("device %1").arg(d)));
        QCOMPARE(hit->lane, d);
        QCOMPARE(hit->program_index, index);
    }
    // Device 0's last backward ends the step (it starts last): B of micro-batch 3 at the makespan.
    const int lastB = indexOf(plan_, 0, {Op::Backward, 0, 3});
    const auto hit = view->boxAt(pixelOf(*view, sim_.makespan_ms - 0.5, 0));
    QVERIFY(hit && hit->program_index == lastB);
}

void GanttViewTest::boxCenterRoundTripsForEveryBox() {
    auto view = showView(buildTimeline(plan_, sim_));
    int checked = 0;
    for (const auto& lane : view->timeline().lanes)
        for (const TimelineBox& box : lane) {
            const BoxRef ref{box.lane, box.program_index};
            const auto hit = view->boxAt(view->boxCenter(ref));
            QVERIFY2(hit && *hit == ref, qPrintable(actionOf(box)));
            ++checked;
        }
    QCOMPARE(static_cast<std::size_t>(checked), view->timeline().boxCount());
}

void GanttViewTest::gapsHitNothing() {
    auto view = showView(buildTimeline(plan_, sim_));
    // Between two lanes there are no boxes.
    QVERIFY(!view->boxAt(pixelOf(*view, 3.5, 1.5)));
    // Device 3 is done before device 0: idle from its last instruction to the makespan.
    double lastEnd = 0;
    for (const auto& timing : sim_.devices[3].timings) lastEnd = std::max(lastEnd, timing.end);
    QVERIFY(sim_.makespan_ms - lastEnd >= 2);
    QVERIFY(!view->boxAt(pixelOf(*view, (lastEnd + sim_.makespan_ms) / 2, 3)));
    // Outside the axis rect (the lane labels) nothing either.
    QVERIFY(!view->boxAt(QPoint(2, pixelOf(*view, 0.5, 0).y())));
}

void GanttViewTest::dragWithinLaneRequestsMove() {
    auto view = showView(buildTimeline(plan_, sim_));
    view->setEditMode(true);
    QSignalSpy moves(view.get(), &GanttView::moveRequested);
    QSignalSpy ranges(view.get(), &GanttView::timeRangeChanged);
    const int index = indexOf(plan_, 1, {Op::Forward, 1, 1});
    const auto& timing = sim_.devices[1].timings[index];
    QWidget* plot = view->plot();
    const QPoint start = plot->mapFrom(view.get(), view->boxCenter({1, index}));
    const QPoint end = start + QPoint(80, 3);
    QTest::mousePress(plot, Qt::LeftButton, {}, start);
    QTest::mouseMove(plot, start + QPoint(30, 0));
    QTest::mouseMove(plot, end);
    QVERIFY(view->isDraggingBox());
    QTest::mouseRelease(plot, Qt::LeftButton, {}, end);
    QCOMPARE(moves.count(), 1);
    const auto args = moves.takeFirst();
    QCOMPARE(args.at(0).toInt(), 1);
    QCOMPARE(args.at(1).toInt(), index);
    const double expected = (timing.start + timing.end) / 2 + 80 * msPerPixel(*view);
    QVERIFY2(std::abs(args.at(2).toDouble() - expected) <= 1.5 * msPerPixel(*view),
             qPrintable(QStringLiteral("%1 vs %2").arg(args.at(2).toDouble()).arg(expected)));
    QCOMPARE(ranges.count(), 0);  // a box drag never pans
    QVERIFY(!view->isDraggingBox());

    // A click without movement is not a move.
    QTest::mouseClick(plot, Qt::LeftButton, {}, start);
    QCOMPARE(moves.count(), 0);
}

void GanttViewTest::dragCancelledByEscapeOrLeavingLane() {
    auto view = showView(buildTimeline(plan_, sim_));
    view->setEditMode(true);
    QSignalSpy moves(view.get(), &GanttView::moveRequested);
    const int index = indexOf(plan_, 1, {Op::Forward, 1, 1});
    QWidget* plot = view->plot();
    const QPoint start = plot->mapFrom(view.get(), view->boxCenter({1, index}));

    QTest::mousePress(plot, Qt::LeftButton, {}, start);
    QTest::mouseMove(plot, start + QPoint(40, 0));
    QVERIFY(view->isDraggingBox());
    QTest::keyClick(plot, Qt::Key_Escape);
    QVERIFY(!view->isDraggingBox());
    QTest::mouseRelease(plot, Qt::LeftButton, {}, start + QPoint(40, 0));
    QCOMPARE(moves.count(), 0);

    const int laneStep = qRound(view->plot()->yAxis->coordToPixel(2) - view->plot()->yAxis->coordToPixel(1));
    QTest::mousePress(plot, Qt::LeftButton, {}, start);
    QTest::mouseMove(plot, start + QPoint(40, 0));
    QTest::mouseMove(plot, start + QPoint(40, laneStep));  // into device 2's lane
    QVERIFY(!view->isDraggingBox());
    QTest::mouseMove(plot, start + QPoint(50, 0));  // back: still cancelled
    QTest::mouseRelease(plot, Qt::LeftButton, {}, start + QPoint(50, 0));
    QCOMPARE(moves.count(), 0);
}

void GanttViewTest::pressOnEmptySpacePans() {
    auto view = showView(buildTimeline(plan_, sim_));
    QSignalSpy moves(view.get(), &GanttView::moveRequested);
    QSignalSpy ranges(view.get(), &GanttView::timeRangeChanged);
    QWidget* plot = view->plot();
    const QPoint start = plot->mapFrom(view.get(), pixelOf(*view, 6.5, 1.5));  // between lanes
    QVERIFY(!view->boxAt(view->plot()->mapTo(view.get(), start)));
    const QCPRange before = view->plot()->xAxis->range();
    const QCPRange yBefore = view->plot()->yAxis->range();
    const double perPixel = msPerPixel(*view);
    QTest::mousePress(plot, Qt::LeftButton, {}, start);
    QTest::mouseMove(plot, start + QPoint(50, 0));
    QTest::mouseMove(plot, start + QPoint(100, 20));
    QTest::mouseRelease(plot, Qt::LeftButton, {}, start + QPoint(100, 20));
    QCOMPARE(moves.count(), 0);
    QVERIFY(ranges.count() > 0);
    const QCPRange after = view->plot()->xAxis->range();
    // Dragging the content right by 100 px shows earlier times: the range moves left.
    QVERIFY(std::abs((before.lower - after.lower) - 100 * perPixel) < 1e-6 * before.size() + 0.5 * perPixel);
    QVERIFY(std::abs(after.size() - before.size()) < 1e-9 * before.size());
    QCOMPARE(view->plot()->yAxis->range().lower, yBefore.lower);
    QCOMPARE(view->plot()->yAxis->range().upper, yBefore.upper);
}

void GanttViewTest::wheelZoomsTimeOnly() {
    auto view = showView(buildTimeline(plan_, sim_));
    QSignalSpy ranges(view.get(), &GanttView::timeRangeChanged);
    QCustomPlot* plot = view->plot();
    const QPointF pos = plot->mapFrom(view.get(), pixelOf(*view, 10, 1.5));
    const double keyUnderCursor = plot->xAxis->pixelToCoord(pos.x());
    const QCPRange before = plot->xAxis->range();
    const QCPRange yBefore = plot->yAxis->range();
    QWheelEvent wheel(pos, plot->mapToGlobal(pos), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(plot, &wheel);
    const QCPRange after = plot->xAxis->range();
    QVERIFY(after.size() < 0.95 * before.size());                                                   // zoomed in
    QVERIFY(std::abs(plot->xAxis->pixelToCoord(pos.x()) - keyUnderCursor) < 1e-6 * before.size());  // about the cursor
    QCOMPARE(plot->yAxis->range().lower, yBefore.lower);
    QCOMPARE(plot->yAxis->range().upper, yBefore.upper);
    QVERIFY(ranges.count() > 0);
    QCOMPARE(ranges.last().at(0).toDouble(), after.lower);

    // Zooming far out stops at three schedules' width instead of losing the boxes.
    for (int i = 0; i < 60; ++i) {
        QWheelEvent out(pos, plot->mapToGlobal(pos), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                        Qt::NoScrollPhase, false);
        QApplication::sendEvent(plot, &out);
    }
    QVERIFY(plot->xAxis->range().size() <= 3 * sim_.makespan_ms * (1 + 1e-9));
    QVERIFY(plot->xAxis->range().size() >= 2 * sim_.makespan_ms);
    QCOMPARE(ranges.last().at(1).toDouble(), plot->xAxis->range().upper);
}

void GanttViewTest::tooltipNamesTheInstruction() {
    auto view = showView(buildTimeline(plan_, sim_));
    const int index = indexOf(plan_, 2, {Op::Forward, 2, 0});
    const QString tip = view->tooltipFor({2, index});
    QVERIFY2(tip.contains(QString::fromStdString(toActionString(plan_.devices[2].program[index]))), qPrintable(tip));
    QVERIFY(tip.contains(QStringLiteral("forward")));
    QVERIFY2(tip.contains(QStringLiteral("2 ms → 3 ms")), qPrintable(tip));  // from 2 to 3
    view->setTimeBase(TimeBase::Units);  // a unit-cost plan: the same times in time units
    QVERIFY2(view->tooltipFor({2, index}).contains(QStringLiteral("2 units → 3 units")), qPrintable(tip));
    QCOMPARE(view->plot()->xAxis->label(), QStringLiteral("time (units)"));
    // It started late because device 2 waited for stage 1's activation (from device 1).
    QVERIFY2(tip.contains(QStringLiteral("1SEND_F0 from device 1")), qPrintable(tip));
    const int recv = indexOf(plan_, 2, {Op::RecvForward, 2, 0});
    const QString waitTip = view->tooltipFor({2, recv});
    QVERIFY(waitTip.contains(QStringLiteral("2RECV_F0")));
    QVERIFY(waitTip.contains(QStringLiteral("waited for the activation 1SEND_F0 from device 1")));
    QVERIFY(view->tooltipFor({7, 0}).isEmpty());
}

void GanttViewTest::hoverReportsTheBox() {
    auto view = showView(buildTimeline(plan_, sim_));
    QSignalSpy hovered(view.get(), &GanttView::boxHovered);
    const int index = indexOf(plan_, 0, {Op::Forward, 0, 2});
    QWidget* plot = view->plot();
    // On a real display a button-less move goes through the window system: wait for it.
    QTest::mouseMove(plot, plot->mapFrom(view.get(), view->boxCenter({0, index})));
    QTRY_VERIFY(hovered.count() >= 1);
    const auto box = hovered.last().at(0).value<std::optional<BoxRef>>();
    QVERIFY(box && *box == (BoxRef{0, index}));
    QTest::mouseMove(plot, plot->mapFrom(view.get(), pixelOf(*view, 6.5, 1.5)));
    QTRY_VERIFY(!hovered.last().at(0).value<std::optional<BoxRef>>());
}

void GanttViewTest::legendShowsEachKindPresent() {
    Plan plan = plan_;
    viewtest::applyPasses(plan, "checkpoint");
    const SimResult sim = viewtest::simulate(plan);
    auto view = showView(buildTimeline(plan, sim));
    QSet<int> kinds;
    for (const auto& lane : view->timeline().lanes)
        for (const TimelineBox& box : lane) kinds.insert(static_cast<int>(box.kind));
    QVERIFY(kinds.contains(static_cast<int>(BoxKind::CheckpointedForward)));
    QCPLegend* legend = view->plot()->legend;
    QVERIFY(legend->visible());
    QCOMPARE(legendItems(legend).size(), kinds.size());
    QSet<int> shown;
    for (QCPAbstractLegendItem* entry : legendItems(legend)) {
        auto* item = qobject_cast<SwatchLegendItem*>(entry);
        QVERIFY(item);
        for (int k : kinds)
            if (item->text() == labelOf(static_cast<BoxKind>(k))) {
                QCOMPARE(item->fillColor(), colorOf(static_cast<BoxKind>(k)));
                shown.insert(k);
            }
    }
    QCOMPARE(shown, kinds);
    view->setShadeBubbles(true);
    QCOMPARE(legendItems(legend).size(), kinds.size() + 1);
}

// Seven entries on a plot too narrow for them on one line: the legend wraps into a grid with
// empty cells, which QCPLegend::item() returns as nullptr (issue 10: SIGSEGV on View → Shade
// bubbles for the LLaMA-2 and GPT-3 examples). Every toggle must keep one entry per kind.
void GanttViewTest::wrappedLegendSurvivesShadingToggles() {
    Timeline timeline = viewtest::syntheticTimeline(4, 12);
    constexpr BoxKind extra[] = {BoxKind::BackwardInput, BoxKind::BackwardWeight};
    for (int i = 0; i < 2; ++i) timeline.lanes[0][static_cast<std::size_t>(i)].kind = extra[i];
    QSet<int> kinds;
    for (const auto& lane : timeline.lanes)
        for (const TimelineBox& box : lane) kinds.insert(static_cast<int>(box.kind));
    QCOMPARE(kinds.size(), 7);  // the 5 of syntheticTimeline and the 2 above
    for (int width : {1400, 700, 420, 1000}) {
        auto view = showView(timeline, {width, 420});
        for (int round = 0; round < 3; ++round) {
            view->setShadeBubbles(true);
            view->plot()->replot();
            QCOMPARE(legendItems(view->plot()->legend).size(), kinds.size() + 1);
            view->setShadeBubbles(false);
            view->plot()->replot();
            QCOMPARE(legendItems(view->plot()->legend).size(), kinds.size());
            view->setTimeline(timeline);
            view->plot()->replot();
        }
        // Wrapped, not cut off: the legend's entries lie within the plot's width.
        for (QCPAbstractLegendItem* item : legendItems(view->plot()->legend))
            QVERIFY2(item->outerRect().right() <= view->plot()->width() + 1, qPrintable(QString::number(width)));
    }
}

void GanttViewTest::setTimelineKeepsOrFitsRange() {
    const Timeline base = buildTimeline(plan_, sim_);
    auto view = showView(base);
    QCOMPARE(view->plot()->xAxis->range().lower, -0.01 * base.makespan);
    QCOMPARE(view->plot()->xAxis->range().upper, 1.01 * base.makespan);
    view->setTimeRange(5, 10);
    auto scaled = [&](double factor) {
        Timeline t = base;
        for (auto& lane : t.lanes)
            for (auto& box : lane) box.start *= factor, box.end *= factor;
        t.makespan *= factor;
        return t;
    };
    QVERIFY(view->userZoomed());
    view->setTimeline(scaled(1.2));  // within 25% and zoomed: the user's zoom stays
    QCOMPARE(view->plot()->xAxis->range().lower, 5.0);
    QCOMPARE(view->plot()->xAxis->range().upper, 10.0);
    view->setTimeline(scaled(2.0));  // 2.0 / 1.2 = +67%: fit the new schedule
    QCOMPARE(view->plot()->xAxis->range().upper, 1.01 * 2.0 * base.makespan);
    QVERIFY(!view->userZoomed());
    // Not zoomed: a slightly longer schedule (a pass toggled off) is refitted, never cut off.
    view->setTimeline(scaled(2.2));
    QCOMPARE(view->plot()->xAxis->range().upper, 1.01 * 2.2 * base.makespan);
}

void GanttViewTest::hundredThousandBoxesDrawBounded() {
    auto view = showView(viewtest::syntheticTimeline(32, 3125), {1600, 900});
    const GanttPlottable* boxes = view->boxesPlottable();
    const int width = view->plot()->axisRect()->width();
    QVERIFY(boxes->lastRectCount() > 0);
    QVERIFY2(boxes->lastRectCount() <= 32 * width, qPrintable(QString::number(boxes->lastRectCount())));
    // One drawRects per colour (plus one hatch pass for checkpointed forwards).
    QVERIFY(boxes->lastDrawRectsCalls() <= static_cast<int>(BoxKind::Count) + 1);
    // Zoomed to 1%, every visible box is wide and drawn as itself.
    const double makespan = view->timeline().makespan;
    view->setTimeRange(0.5 * makespan, 0.51 * makespan);
    view->plot()->replot();
    int visible = 0;
    for (const auto& lane : view->timeline().lanes)
        for (const TimelineBox& box : lane)
            if (box.end > 0.5 * makespan && box.start < 0.51 * makespan) ++visible;
    QCOMPARE(boxes->lastRectCount(), visible);
    QVERIFY(boxes->lastLabelCount() > 0);
}

QTEST_MAIN(GanttViewTest)
#include "tst_gantt_view.moc"
