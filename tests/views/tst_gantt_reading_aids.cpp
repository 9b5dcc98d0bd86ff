// GanttView's reading aids as the window uses them: colour modes rebuild the legend, the
// critical path follows each new timeline while on, and hovering a box draws its data
// dependencies. Expected paths and arrows are the 1F1B 4×4 unit-cost schedule's, worked by
// hand (tests/core/critical_path_test.cpp derives the same 14-box path).
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "tests/views/ShownGantt.h"
#include "tests/views/ViewTestPlans.h"
#include "views/ColorMode.h"
#include "views/GanttPlottable.h"
#include "views/GanttView.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"

using namespace mario;
using namespace mario::views;
using mario::viewtest::showView;

namespace {

QStringList legendLabels(QCustomPlot* plot) {
    QStringList labels;
    for (QCPAbstractLegendItem* item : legendItems(plot->legend))
        if (auto* swatch = dynamic_cast<SwatchLegendItem*>(item)) labels << swatch->text();
    return labels;
}

}  // namespace

class GanttReadingAidsTest : public QObject {
    Q_OBJECT
private slots:
    void init() {
        plan_ = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
        sim_ = viewtest::simulate(plan_);
    }

    void aColourModeRebuildsTheLegend() {
        auto view = showView(buildTimeline(plan_, sim_));
        QVERIFY(legendLabels(view->plot()).contains("forward"));
        view->setColorMode(ColorMode::Microbatch);
        QStringList expected;
        for (const LegendEntry& entry : legendEntries(ColorMode::Microbatch, view->timeline())) expected << entry.label;
        QCOMPARE(legendLabels(view->plot()), expected);
        QCOMPARE(view->boxesPlottable()->colorMode(), ColorMode::Microbatch);
        // Four micro-batches, each named in the legend.
        for (int mb = 0; mb < 4; ++mb)
            QVERIFY2(expected.join('|').contains(QString::number(mb)), qPrintable(expected.join('|')));
    }

    void theCriticalPathFollowsEachTimelineWhileOn() {
        auto view = showView(buildTimeline(plan_, sim_));
        QVERIFY(view->boxesPlottable()->criticalPath().empty());
        view->setShowCriticalPath(true);
        // 1F1B 4×4, unit costs, free links: F0 down the pipeline (devices 0–3), device 3's
        // eight instructions, then B3 back up (devices 2, 1, 0): 3 + 8 + 3 = 14 boxes.
        QCOMPARE(view->boxesPlottable()->criticalPath().size(), std::size_t(14));
        QVERIFY(legendLabels(view->plot()).contains("critical path"));
        const Plan longer = viewtest::unitPlan(Scheme::OneFOneB, 4, 6);
        view->setTimeline(buildTimeline(longer, viewtest::simulate(longer)));
        QCOMPARE(view->boxesPlottable()->criticalPath(), view->timeline().criticalPath);
        QCOMPARE(view->boxesPlottable()->criticalPath().size(), std::size_t(3 + 12 + 3));
        view->setShowCriticalPath(false);
        QVERIFY(view->boxesPlottable()->criticalPath().empty());
    }

    void hoveringABoxDrawsWhereItsDataCameFrom() {
        auto view = showView(buildTimeline(plan_, sim_));
        const auto& program = plan_.devices[2].program;
        const int f0 = static_cast<int>(std::find(program.begin(), program.end(), Instruction{Op::Forward, 2, 0}) -
                                        program.begin());
        QWidget* plot = view->plot();
        QTest::mouseMove(plot, plot->mapFrom(view.get(), view->boxCenter({2, f0})));
        const auto& arrows = view->boxesPlottable()->arrows();
        QVERIFY(!arrows.empty());
        // Its input: stage 1's activation, sent by device 1 when its F0 ended at t = 2.
        const bool fromDevice1 = std::any_of(arrows.begin(), arrows.end(), [](const Arrow& a) {
            return a.role == Arrow::Role::Incoming && a.fromLane == 1 && a.toLane == 2 &&
                   std::abs(a.fromTime - 2) < 1e-9;
        });
        QVERIFY(fromDevice1);
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(plot, &leave);
        QVERIFY(view->boxesPlottable()->arrows().empty());
    }

private:
    Plan plan_;
    SimResult sim_;
};

QTEST_MAIN(GanttReadingAidsTest)
#include "tst_gantt_reading_aids.moc"
