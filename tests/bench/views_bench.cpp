// QBENCHMARK programs for mario::views (not run as tests). docs/benchmarks.md targets: a Gantt
// replot with 100k boxes ≤ 16 ms; re-simulate + redraw of a 32-device × 64-micro-batch
// Chimera schedule ≤ 50 ms. Run offscreen:
//   QT_QPA_PLATFORM=offscreen ./mario_views_bench            (add -iterations N, -median N)
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "tests/views/ViewTestPlans.h"
#include "views/GanttPlottable.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"

using namespace mario;
using namespace mario::views;

class ViewsBench : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void replot100kFitToView();
    void replot100kZoomedIn();
    void fitToView100kFromZoom();
    void pan100kOnePercent();
    void resimulateAndRedrawChimera32x64();
    void memoryChartChimera32x64();

private:
    std::unique_ptr<GanttView> gantt_;
    Plan chimera_;
};

void ViewsBench::initTestCase() {
    gantt_ = std::make_unique<GanttView>();
    gantt_->resize(1600, 900);
    gantt_->show();
    QVERIFY(QTest::qWaitForWindowExposed(gantt_.get()));
    gantt_->setTimeline(viewtest::syntheticTimeline(32, 3125));  // 100k boxes
    QCOMPARE(gantt_->timeline().boxCount(), std::size_t(100000));
    chimera_ = viewtest::chimeraExample(32, 64);
}

void ViewsBench::replot100kFitToView() {
    gantt_->fitToView();
    QBENCHMARK { gantt_->plot()->replot(QCustomPlot::rpImmediateRefresh); }
    qInfo("rects drawn: %d, labels: %d", gantt_->boxesPlottable()->lastRectCount(),
          gantt_->boxesPlottable()->lastLabelCount());
}

void ViewsBench::replot100kZoomedIn() {
    // 2% of the time range: about 2k wide boxes, each with its micro-batch number.
    const double makespan = gantt_->timeline().makespan;
    gantt_->setTimeRange(0.49 * makespan, 0.51 * makespan);
    QBENCHMARK { gantt_->plot()->replot(QCustomPlot::rpImmediateRefresh); }
    qInfo("rects drawn: %d, labels: %d", gantt_->boxesPlottable()->lastRectCount(),
          gantt_->boxesPlottable()->lastLabelCount());
}

void ViewsBench::fitToView100kFromZoom() {
    const double makespan = gantt_->timeline().makespan;
    QBENCHMARK {
        gantt_->setTimeRange(0.3 * makespan, 0.4 * makespan);  // queued, no replot of its own
        gantt_->fitToView();
        gantt_->plot()->repaint();
    }
}

void ViewsBench::pan100kOnePercent() {
    const double makespan = gantt_->timeline().makespan;
    gantt_->setTimeRange(0.2 * makespan, 0.6 * makespan);
    QBENCHMARK {
        const QCPRange range = gantt_->plot()->xAxis->range();
        gantt_->plot()->xAxis->setRange(range.lower + 0.01 * makespan, range.upper + 0.01 * makespan);
        gantt_->plot()->replot(QCustomPlot::rpImmediateRefresh);
    }
}

void ViewsBench::resimulateAndRedrawChimera32x64() {
    // What the app does after a pass toggle or a drag, minus the passes themselves.
    GanttView view;
    view.resize(1600, 900);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QBENCHMARK {
        auto sim = Simulator::run(chimera_, SimOptions{.record_memory_curve = true});
        view.setTimeline(buildTimeline(chimera_, *sim));
        view.plot()->repaint();
    }
    qInfo("boxes: %zu", view.timeline().boxCount());
}

void ViewsBench::memoryChartChimera32x64() {
    const SimResult sim = viewtest::simulate(chimera_, true);
    MemoryChart chart;
    chart.resize(1600, 500);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    QBENCHMARK {
        chart.setMemory(sim, chimera_.info.memory_limit_bytes);
        chart.repaint();
    }
}

QTEST_MAIN(ViewsBench)
#include "views_bench.moc"
