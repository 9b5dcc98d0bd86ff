// Issue 3's interaction target: re-simulate and redraw after a pass toggle on a 32-device ×
// 64-micro-batch Chimera schedule (GPT-3 13B) ≤ 50 ms. Not a test: run
//   QT_QPA_PLATFORM=offscreen build/tests/bench/mario_app_bench
#include <QtTest>

#include "app/gui/MainWindow.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"

using namespace mario;
using namespace mario::gui;

class AppBench : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        window_.document()->setSynchronous(true);
        window_.resize(1600, 1000);
        window_.show();
        QVERIFY(
            window_.openFile(QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/gpt3-13b-chimera.config.json")));
    }

    // Toggling a pass whose result was computed before (off and on again, undo, redo).
    void toggleOverlapCached() {
        bool on = false;
        QBENCHMARK {
            window_.document()->setPassEnabled(PassId::Overlap, on);
            window_.repaint();
            on = !on;
        }
    }

    // A toggle never seen before, without prepose-forward: passes + simulation + redraw.
    void recomputeWithoutPrepose() {
        ScheduleInput state = window_.document()->state();
        state.passes = {PassId::Checkpoint, PassId::Overlap, PassId::Redundancy};
        QBENCHMARK {
            const ComputedSchedule s = computeSchedule(state, 1);
            window_.gantt()->setTimeline(views::buildTimeline(s.plan, s.result));
            window_.memoryChart()->setMemory(s.result, s.plan.info.memory_limit_bytes);
            window_.repaint();
        }
    }

    // The worst case: all four passes from scratch (prepose-forward simulates candidates).
    void recomputeAllPasses() {
        ScheduleInput state = window_.document()->state();
        state.passes = {PassId::Checkpoint, PassId::Overlap, PassId::Redundancy, PassId::Prepose};
        QBENCHMARK {
            const ComputedSchedule s = computeSchedule(state, 1);
            window_.gantt()->setTimeline(views::buildTimeline(s.plan, s.result));
            window_.memoryChart()->setMemory(s.result, s.plan.info.memory_limit_bytes);
            window_.repaint();
        }
    }

private:
    MainWindow window_;
};

QTEST_MAIN(AppBench)
#include "app_bench.moc"
