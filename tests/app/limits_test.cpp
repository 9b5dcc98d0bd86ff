// The window at the documented limits (issue 30): GPT-3 13B Chimera on 32 devices with 2048
// micro-batches (450 000 instructions, seconds of computation on two cores). A settings change,
// a pass toggle and an undo to a state not computed before each show the progress with Cancel;
// Cancel (or Ctrl+Z during a change) leaves the schedule, settings, title and history as shown;
// a finished computation switches the schedule, the settings and the title in one go. Real
// clicks and keys on the real, asynchronous window (offscreen). How long the GUI thread is
// blocked is measured in tests/bench/app_bench.cpp, never asserted here.
#include <QCheckBox>
#include <QFile>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QTimer>
#include <QtTest>

#include "app/gui/ComputationProgress.h"
#include "app/gui/ConfigPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassPanel.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::gui;

namespace {

constexpr int kComputeTimeoutMs = 120000;  // generous: a shared CI machine, and a dropped job still running

// What the user sees of the document: the schedule, the settings behind it, the title.
struct Seen {
    std::size_t instructions = 0;
    double makespan = 0;
    int globalBatch = 0;  // the document's state
    int panelBatch = 0;   // the settings panel
    std::vector<PassId> passes;
    QString title;
    bool modified = false;
    int undoIndex = 0;

    static Seen of(MainWindow& window) {
        ScheduleDocument* document = window.document();
        Seen seen;
        seen.instructions = document->current().plan.instructionCount();
        seen.makespan = document->current().result.makespan_ms;
        seen.globalBatch = document->state().config->parallel.global_batch_size;
        seen.panelBatch = window.configPanel()->findChild<QSpinBox*>("globalBatch")->value();
        seen.passes = document->state().passes;
        seen.title = window.windowTitle();
        seen.modified = window.isWindowModified();
        seen.undoIndex = document->undoStack()->index();
        return seen;
    }
    bool operator==(const Seen&) const = default;
};

// Checks between every two turns of the event loop that the schedule shown, the document's
// settings and the title's modified mark belong together: a window that showed the new title
// over the old schedule for one frame fails here.
class Together : public QObject {
public:
    Together(MainWindow& window, const Seen& before) : window_(window), before_(before) {
        connect(&timer_, &QTimer::timeout, this, [this] { check(); });
        timer_.start(0);
    }
    QString broken() const { return broken_; }

private:
    void check() {
        const Seen now = Seen::of(window_);
        const bool newSchedule = now.instructions != before_.instructions;
        const bool newSettings = now.globalBatch != before_.globalBatch;
        const bool newTitle = now.modified != before_.modified;
        if (broken_.isEmpty() && (newSchedule != newSettings || newSchedule != newTitle))
            broken_ = QStringLiteral("schedule %1, settings %2, title %3 changed apart")
                          .arg(newSchedule)
                          .arg(newSettings)
                          .arg(newTitle);
    }

    MainWindow& window_;
    Seen before_;
    QTimer timer_;
    QString broken_;
};

}  // namespace

class LimitsTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    bool computing(MainWindow& window) { return window.document()->isComputing(); }

    // Ctrl+Z from the chart (a spin box with focus would undo its own text).
    void pressUndo(MainWindow& window) {
        window.gantt()->setFocus();
        QTest::keyClick(window.gantt(), Qt::Key_Z, Qt::ControlModifier);
    }

    void typeGlobalBatch(MainWindow& window, int value) {
        auto* box = window.configPanel()->findChild<QSpinBox*>("globalBatch");
        box->setFocus();
        QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(box, QString::number(value));
    }

    // The dropped job finishes on its worker: its result, when it comes, must change nothing.
    void letDroppedJobsEnd() {
        QThreadPool::globalInstance()->waitForDone();
        QTest::qWait(50);
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void changesAtTheLimitsShowProgressCancelKeepsAllAndResultsSwitchTogether() {
        const QString path = dir_.filePath("gpt3-13b-chimera.config.json");
        QVERIFY(QFile::copy(QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/gpt3-13b-chimera.config.json"),
                            path));
        MainWindow window;  // asynchronous, as in the real window
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));  // Ctrl+Z reaches the Edit menu's Undo
        QVERIFY(window.openFile(path));
        QTRY_VERIFY_WITH_TIMEOUT(window.document()->hasSchedule() && !computing(window), kComputeTimeoutMs);
        const Seen opened = Seen::of(window);
        QCOMPARE(opened.globalBatch, 64);
        QVERIFY(!opened.modified);

        // 1. The settings: 2048 micro-batches typed into the panel. The progress comes with
        // Cancel; meanwhile the window shows the schedule, settings and title it had.
        typeGlobalBatch(window, 2048);
        QTRY_VERIFY_WITH_TIMEOUT(window.progress()->isVisible(), kComputeTimeoutMs);
        QVERIFY2(window.progress()->text().startsWith("Change settings"), qPrintable(window.progress()->text()));
        Seen during = Seen::of(window);
        QCOMPARE(during.panelBatch, 2048);  // what the user typed stays in the panel meanwhile
        during.panelBatch = opened.panelBatch;
        QCOMPARE(during, opened);
        QTest::mouseClick(window.progress()->cancelButton(), Qt::LeftButton);
        QVERIFY(!computing(window));
        QVERIFY(window.progress()->isHidden());
        QCOMPARE(Seen::of(window), opened);  // the panel shows 64 again; nothing is modified
        letDroppedJobsEnd();
        QCOMPARE(Seen::of(window), opened);

        // Again, to the end: schedule, settings and title switch in the same turn.
        {
            Together together(window, opened);
            typeGlobalBatch(window, 2048);
            QTRY_VERIFY_WITH_TIMEOUT(window.progress()->isVisible(), kComputeTimeoutMs);
            QTRY_VERIFY_WITH_TIMEOUT(!computing(window), kComputeTimeoutMs);
            QTest::qWait(20);
            QVERIFY2(together.broken().isEmpty(), qPrintable(together.broken()));
        }
        const Seen big = Seen::of(window);
        QVERIFY(window.progress()->isHidden());
        QVERIFY2(big.instructions > 400000, qPrintable(QString::number(big.instructions)));
        QCOMPARE(big.globalBatch, 2048);
        QCOMPARE(big.panelBatch, 2048);
        QVERIFY(big.modified && big.title.contains("[*]"));
        QCOMPARE(big.undoIndex, opened.undoIndex + 1);

        // 2. A pass toggle at this size (overlap off: prepose-forward runs again, seconds), then
        // Ctrl+Z while it computes cancels it (it is not in the history yet).
        QCheckBox* overlap = window.passPanel()->checkBox(PassId::Overlap);
        QVERIFY(overlap->isChecked());
        QTest::mouseClick(overlap, Qt::LeftButton, {}, QPoint(8, overlap->height() / 2));
        QVERIFY(computing(window));
        QTRY_VERIFY_WITH_TIMEOUT(window.progress()->isVisible(), kComputeTimeoutMs);
        QVERIFY2(window.progress()->text().startsWith("Disable overlap"), qPrintable(window.progress()->text()));
        pressUndo(window);
        QVERIFY(!computing(window));
        QVERIFY(overlap->isChecked());  // the box shows the state shown again
        QCOMPARE(Seen::of(window), big);
        letDroppedJobsEnd();
        QCOMPARE(Seen::of(window), big);
        QTest::mouseClick(overlap, Qt::LeftButton, {}, QPoint(8, overlap->height() / 2));
        QTRY_VERIFY_WITH_TIMEOUT(!computing(window), kComputeTimeoutMs);
        const Seen toggled = Seen::of(window);
        QCOMPARE(toggled.undoIndex, big.undoIndex + 1);
        QVERIFY(!overlap->isChecked());
        QVERIFY(toggled.makespan != big.makespan);

        // 3. Undo to a state no longer remembered: the stack waits for the computation, the
        // window keeps the toggled schedule; Cancel returns the history to it.
        window.document()->forgetComputedStates();
        pressUndo(window);
        QVERIFY(computing(window));
        QTRY_VERIFY_WITH_TIMEOUT(window.progress()->isVisible(), kComputeTimeoutMs);
        QVERIFY2(window.progress()->text().startsWith("Undo Disable overlap"), qPrintable(window.progress()->text()));
        Seen undoing = Seen::of(window);
        undoing.undoIndex = toggled.undoIndex;  // QUndoStack has moved already; nothing shown has
        QCOMPARE(undoing, toggled);
        QTest::mouseClick(window.progress()->cancelButton(), Qt::LeftButton);
        QCOMPARE(Seen::of(window), toggled);
        letDroppedJobsEnd();
        QCOMPARE(Seen::of(window), toggled);
        pressUndo(window);
        QTRY_VERIFY_WITH_TIMEOUT(!computing(window), kComputeTimeoutMs);
        const Seen undone = Seen::of(window);
        QCOMPARE(undone.instructions, big.instructions);
        QCOMPARE(undone.makespan, big.makespan);
        QVERIFY(overlap->isChecked());

        // Undo once more: the opened schedule again, unmodified.
        pressUndo(window);
        QTRY_VERIFY_WITH_TIMEOUT(!computing(window), kComputeTimeoutMs);
        QCOMPARE(Seen::of(window), opened);
    }
};

QTEST_MAIN(LimitsTest)
#include "limits_test.moc"
