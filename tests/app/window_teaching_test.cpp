// Issue 39: the window says exactly what happens, driven with real mouse and key events
// (offscreen). The pass stepper moves the headline, the summary and the memory chart with the
// step and says the memory change; a unit-cost plan reopened keeps its time units and passes; a
// dragged box lands where its ghost shows; a CSV export asks before dropping the Rs; Ctrl+Z in
// a settings field undoes the document; the headline says when the base does not fit or already
// fits; passes that need checkpointing are greyed without it.
#include <QAbstractButton>
#include <QCheckBox>
#include <QDialog>
#include <QFile>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <qcustomplot.h>

#include "app/gui/ConfigPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassPanel.h"
#include "app/gui/PassStepper.h"
#include "app/gui/SummaryPanel.h"
#include "core/io/PipeliningCsv.h"
#include "core/util/HumanBytes.h"
#include "tests/app/GanttDrag.h"
#include "tests/common/ProgramLookup.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"
#include "views/Timeline.h"

using namespace mario;
using namespace mario::gui;
using mario::test::indexOf;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");
const QString kFigure2 = kExamples + "/figure2.config.json";

QString bytes(double value) { return QString::fromStdString(humanBytes(value)); }

// The window on screen (clicks and drags need real geometry) with `file` open.
bool showFile(MainWindow& window, const QString& file) {
    window.document()->setSynchronous(true);
    window.resize(1400, 900);
    window.show();
    return QTest::qWaitForWindowExposed(&window) && window.openFile(file);
}

// A click near the left edge: on a check box's indicator, inside any push button.
void click(QAbstractButton* button) { QTest::mouseClick(button, Qt::LeftButton, {}, QPoint(8, button->height() / 2)); }

// The highest point of the memory chart's curves, as simulated.
double chartPeak(const MainWindow& window) {
    double peak = 0;
    for (const auto& curve : window.memoryChart()->curves())
        for (const MemoryPoint& point : curve) peak = std::max(peak, point.bytes);
    return peak;
}

// Once the next modal dialog is up: `answer` gets it (and clicks in it).
void whenModal(std::function<void(QDialog*)> answer) {
    QTimer::singleShot(0, [answer] {
        auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
        if (dialog) answer(dialog);
        else whenModal(answer);  // not up yet: look again at the next turn of the event loop
    });
}

}  // namespace

class WindowTeachingTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // Figure 2 (unit costs, 4 devices × 4 micro-batches, activations 1000 bytes, checkpoints 10).
    // Step 0, the base 1F1B: 21 units, and device 0 holds all four activation sets, 4000 bytes.
    // Step 1, checkpoint: 28 units; device 0 holds three checkpoints and one recomputed set,
    // 3 × 10 + 1000 = 1030 bytes. The headline, the summary and the chart say so at each step.
    void theStepperMovesHeadlineSummaryAndMemoryWithTheStep() {
        MainWindow window;
        QVERIFY(showFile(window, kFigure2));
        QCOMPARE(window.summary()->stepTimeText(), QStringLiteral("step 22 units"));
        auto* next = window.stepper()->findChild<QPushButton*>("stepNext");
        auto* done = window.stepper()->findChild<QPushButton*>("stepDone");
        QVERIFY(next && done);
        click(next);
        QCOMPARE(window.stepper()->currentStep(), 0);
        QCOMPARE(window.summary()->stepTimeText(), QStringLiteral("step 21 units"));
        QVERIFY2(window.headlineText().contains("step 21 units"), qPrintable(window.headlineText()));
        QVERIFY2(window.headlineText().contains("pass step 0 of 4"), qPrintable(window.headlineText()));
        QCOMPARE(chartPeak(window), 4000.0);
        QVERIFY2(window.stepper()->caption().contains("peak memory " + bytes(4000)),
                 qPrintable(window.stepper()->caption()));
        click(next);
        QCOMPARE(window.stepper()->currentStep(), 1);
        QCOMPARE(window.summary()->stepTimeText(), QStringLiteral("step 28 units"));
        QVERIFY2(window.headlineText().contains("step 28 units"), qPrintable(window.headlineText()));
        QVERIFY2(window.summary()->detailsText().contains("highest peak memory " + bytes(1030)),
                 qPrintable(window.summary()->detailsText()));
        QCOMPARE(chartPeak(window), 1030.0);
        // The reason to checkpoint, in the caption: the peak before and after the step.
        const QString change = QStringLiteral("Peak memory %1 → %2").arg(bytes(4000), bytes(1030));
        QVERIFY2(window.stepper()->caption().contains(change), qPrintable(window.stepper()->caption()));
        click(done);
        QCOMPARE(window.stepper()->currentStep(), -1);
        QCOMPARE(window.summary()->stepTimeText(), QStringLiteral("step 22 units"));
        QVERIFY2(!window.headlineText().contains("pass step"), qPrintable(window.headlineText()));
    }

    // Figure 2 saved as a plan and reopened: still time units (22 of them), and its four passes
    // shown ticked and fixed, since the plan holds their result; no "+0.0% vs base".
    void aUnitCostPlanReopenedKeepsItsUnitsAndPasses() {
        QTemporaryDir dir;
        const QString plan = dir.filePath("figure2.mario.json");
        {
            MainWindow first;
            first.document()->setSynchronous(true);
            QVERIFY(first.openFile(kFigure2));
            QString error;
            QVERIFY2(first.document()->saveAs(plan, &error), qPrintable(error));
        }
        MainWindow window;
        QVERIFY(showFile(window, plan));
        QCOMPARE(window.summary()->stepTimeText(), QStringLiteral("step 22 units"));
        QVERIFY2(!window.headlineText().contains(" ms"), qPrintable(window.headlineText()));
        QVERIFY2(!window.headlineText().contains("vs base"), qPrintable(window.headlineText()));
        QVERIFY2(window.headlineText().contains("checkpoint, overlap, redundancy, prepose already applied"),
                 qPrintable(window.headlineText()));
        for (PassId pass : {PassId::Checkpoint, PassId::Overlap, PassId::Redundancy, PassId::Prepose}) {
            QCheckBox* box = window.passPanel()->checkBox(pass);
            QVERIFY2(box->isChecked() && !box->isEnabled(), qPrintable(box->text()));
            QVERIFY(box->toolTip().contains("Already applied in the plan file"));
        }
        // Hide still runs on top, and the change is then against the file's plan (22 → 21).
        QCheckBox* hide = window.passPanel()->checkBox(PassId::Hide);
        QVERIFY(hide->isEnabled() && !hide->isChecked());
        click(hide);
        QCOMPARE(window.summary()->stepTimeText(), QStringLiteral("step 21 units"));
        QVERIFY2(window.headlineText().contains("-4.5% vs the file's plan"), qPrintable(window.headlineText()));
    }

    // Base 1F1B on Figure 2: device 1 runs B0 over [8, 10) and F3 after it. F3 let go with the
    // cursor (the ghost's centre) on B0's left half lands before B0, where the ghost shows it;
    // on its right half, after B0: where F3 already stands, and the status bar says so.
    void aDroppedBoxLandsWhereItsGhostShows() {
        MainWindow window;
        QVERIFY(showFile(window, kFigure2));
        window.document()->setPasses({}, "base");
        const Plan before = window.document()->current().plan;
        const auto& timings = window.document()->current().result.devices[1].timings;
        const InstructionTiming b0 = timings[indexOf(before, 1, "1B0")];
        QCOMPARE(b0.start, 8.0);
        QCOMPARE(b0.end, 10.0);
        QVERIFY(indexOf(before, 1, "1F3") > indexOf(before, 1, "1B0"));
        test::dragBox(window, 1, "1F3", 9.5);  // right half: after B0, as it is
        QCOMPARE(window.document()->current().plan.devices[1].program, before.devices[1].program);
        QVERIFY2(window.statusBar()->currentMessage().contains("1F3 on device 1 is already there"),
                 qPrintable(window.statusBar()->currentMessage()));
        test::dragBox(window, 1, "1F3", 8.5);  // left half: before B0 (and the receive it waits on)
        const Plan& after = window.document()->current().plan;
        QVERIFY2(indexOf(after, 1, "1F3") < indexOf(after, 1, "1RECV_B0"), "F3 should now run before B0");
        QVERIFY(indexOf(after, 1, "1RECV_B0") < indexOf(after, 1, "1B0"));
    }

    // Figure 2 with its passes recomputes: the CSV export asks, Cancel writes nothing, and
    // "Export without them" writes the order and says what it dropped.
    void aCsvExportAsksBeforeDroppingTheRecomputations() {
        MainWindow window;
        QVERIFY(showFile(window, kFigure2));
        const int rs = recomputeCount(window.document()->current().plan);
        QVERIFY(rs > 0);
        QTemporaryDir dir;
        const QString csv = dir.filePath("plan.csv");
        QString asked;
        whenModal([&asked](QDialog* dialog) {
            asked = static_cast<QMessageBox*>(dialog)->text();
            click(static_cast<QMessageBox*>(dialog)->button(QMessageBox::Cancel));
        });
        QVERIFY(!window.exportTo(csv));
        QVERIFY(!QFile::exists(csv));
        QVERIFY2(asked.contains(QStringLiteral("recomputes %1 forward").arg(rs)) && asked.contains("prepose"),
                 qPrintable(asked));
        QVERIFY2(window.statusBar()->currentMessage().contains("Export cancelled"),
                 qPrintable(window.statusBar()->currentMessage()));
        whenModal([](QDialog* dialog) { click(dialog->findChild<QPushButton*>("exportWithout")); });
        QVERIFY2(window.exportTo(csv), qPrintable(window.errorText()));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString(file.readAll()).count('\n'), 4);
        const QString said = window.statusBar()->currentMessage();
        QVERIFY2(said.contains("recomputations (R) dropped") && said.contains("prepose left out"), qPrintable(said));
    }

    // Ctrl+Z with the micro-batches field focused: once the typed value is applied, the
    // document's undo (back to 4, redo possible); Ctrl+Shift+Z redoes it. Typing not yet applied
    // is the field's own to undo, and the document never sees it.
    void ctrlZInASettingsFieldUndoesTheDocument() {
        MainWindow window;
        QVERIFY(showFile(window, kFigure2));
        auto* field = window.configPanel()->findChild<QSpinBox*>("microbatches");
        QVERIFY(field && field->isEnabled());
        QCOMPARE(field->value(), 4);
        auto* edit = field->findChild<QLineEdit*>();
        QVERIFY(edit);
        const int opened = window.document()->undoStack()->index();
        QTest::mouseClick(edit, Qt::LeftButton, {}, edit->rect().center());
        QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(edit, "8");
        QTRY_COMPARE_WITH_TIMEOUT(window.document()->state().config->microbatchCount(), 8, 5000);
        QCOMPARE(window.document()->undoStack()->index(), opened + 1);
        QVERIFY(edit->hasFocus());
        QTest::keyClick(edit, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(window.document()->state().config->microbatchCount(), 4);
        QCOMPARE(window.document()->undoStack()->index(), opened);
        QCOMPARE(field->value(), 4);
        QTest::keyClick(edit, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(window.document()->state().config->microbatchCount(), 8);
        QCOMPARE(window.document()->undoStack()->index(), opened + 1);
        // Typed, then Ctrl+Z before it applies: the field's own undo, the document untouched.
        QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(edit, "6");
        QTest::keyClick(edit, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(field->value(), 8);
        QTest::qWait(600);  // past the settings' debounce: nothing may arrive
        QCOMPARE(window.document()->state().config->microbatchCount(), 8);
        QCOMPARE(window.document()->undoStack()->index(), opened + 1);
    }

    // GPT-3 13B Chimera (32 A100-40G, 40 GB limit): without passes device 8 peaks at 87.12 GB,
    // so the base cannot run and "+x% vs base" would read as a regression. LLaMA-2 13B 1F1B on
    // A100-80G: the base peaks at 60.54 GB of 80 GB, yet the example checkpoints.
    // (Peaks from `mario simulate --passes none` on each example.)
    void theHeadlineSaysWhetherTheBaseFits() {
        MainWindow chimera;
        QVERIFY(showFile(chimera, kExamples + "/gpt3-13b-chimera.config.json"));
        const double basePeak = [&] {
            double peak = 0;
            for (const DeviceStats& device : chimera.document()->current().base.devices)
                peak = std::max(peak, device.peak_bytes);
            return peak;
        }();
        QVERIFY(basePeak > 40e9);
        const QString notFit = QStringLiteral("base does not fit (%1 &gt; %2)").arg(bytes(basePeak), bytes(40e9));
        QVERIFY2(chimera.headlineText().contains(notFit), qPrintable(chimera.headlineText()));
        QVERIFY2(!chimera.headlineText().contains("vs base"), qPrintable(chimera.headlineText()));
        QVERIFY2(chimera.summary()->detailsText().contains("the base does not fit"),
                 qPrintable(chimera.summary()->detailsText()));

        MainWindow llama;
        QVERIFY(showFile(llama, kExamples + "/llama2-13b-1f1b.config.json"));
        double llamaBase = 0;
        for (const DeviceStats& device : llama.document()->current().base.devices)
            llamaBase = std::max(llamaBase, device.peak_bytes);
        QVERIFY(llamaBase < 80e9);
        const QString fits = QStringLiteral("base already fits (%1 of %2)").arg(bytes(llamaBase), bytes(80e9));
        QVERIFY2(llama.headlineText().contains(fits), qPrintable(llama.headlineText()));
        QVERIFY2(llama.headlineText().contains("vs base"), qPrintable(llama.headlineText()));
        // Without checkpointing there is nothing to say about it.
        click(llama.passPanel()->allBox());
        QVERIFY2(!llama.headlineText().contains("already fits"), qPrintable(llama.headlineText()));
    }

    // Overlap, redundancy and prepose work on recomputations: with checkpointing off they are
    // greyed with the reason; ticking checkpoint (a real click) enables them again.
    void passesThatNeedCheckpointingAreGreyedWithoutIt() {
        MainWindow window;
        QVERIFY(showFile(window, kFigure2));
        PassPanel* passes = window.passPanel();
        click(passes->allBox());  // all four off
        QVERIFY(window.document()->state().passes.empty());
        for (PassId pass : {PassId::Overlap, PassId::Redundancy, PassId::Prepose}) {
            QVERIFY2(!passes->checkBox(pass)->isEnabled(), qPrintable(passes->checkBox(pass)->text()));
            QVERIFY(passes->checkBox(pass)->toolTip().contains("Needs checkpointing"));
        }
        QVERIFY(passes->checkBox(PassId::Checkpoint)->isEnabled());
        click(passes->checkBox(PassId::Checkpoint));
        for (PassId pass : {PassId::Overlap, PassId::Redundancy, PassId::Prepose}) {
            QVERIFY(passes->checkBox(pass)->isEnabled());
            QVERIFY(!passes->checkBox(pass)->toolTip().contains("Needs checkpointing"));
        }
        click(passes->checkBox(PassId::Prepose));
        QVERIFY(passes->checkBox(PassId::Prepose)->isChecked());
        // Checkpoint off again: prepose, still on, stays clickable so that it can be turned off.
        click(passes->checkBox(PassId::Checkpoint));
        QVERIFY(passes->checkBox(PassId::Prepose)->isEnabled());
        QVERIFY(!passes->checkBox(PassId::Overlap)->isEnabled());
    }

    // Figure 2 with its passes: 12 Rs of one unit, 8 of them hidden by the simulator's count
    // (DeviceStats::recompute_hidden_ms, summed in core). H marks each R box hidden or exposed;
    // per device the hidden boxes add up to the simulator's hidden time and the exposed ones to
    // the rest, and the legend names both.
    void hTogglesRsMarkedHiddenOrExposed() {
        MainWindow window;
        QVERIFY(showFile(window, kFigure2));
        const SimResult& result = window.document()->current().result;
        QCOMPARE(result.recompute_ms, 12.0);
        QCOMPARE(result.recompute_hidden_ms, 8.0);
        const views::Timeline& timeline = window.gantt()->timeline();
        for (std::size_t d = 0; d < timeline.lanes.size(); ++d) {
            double hidden = 0, exposed = 0;
            for (const views::TimelineBox& box : timeline.lanes[d]) {
                QCOMPARE(box.cover != views::RecomputeCover::None, box.kind == views::BoxKind::Recompute);
                QVERIFY(box.cover != views::RecomputeCover::Partly);  // whole units: all or nothing
                (box.cover == views::RecomputeCover::Hidden ? hidden : exposed) +=
                    box.cover == views::RecomputeCover::None ? 0 : box.end - box.start;
            }
            QCOMPARE(hidden, result.devices[d].recompute_hidden_ms);
            QCOMPARE(exposed, result.devices[d].recompute_ms - result.devices[d].recompute_hidden_ms);
        }
        auto legend = [&window] {
            QStringList texts;
            for (QCPAbstractLegendItem* item : views::legendItems(window.gantt()->plot()->legend))
                if (auto* swatch = qobject_cast<views::SwatchLegendItem*>(item)) texts << swatch->text();
            return texts;
        };
        QVERIFY(!legend().contains("R hidden in a bubble"));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_H);
        QVERIFY2(legend().contains("R hidden in a bubble") && legend().contains("R exposed (the step waits for it)"),
                 qPrintable(legend().join(", ")));
        QTest::keyClick(&window, Qt::Key_H);
        QVERIFY(!legend().contains("R hidden in a bubble"));
    }
};

QTEST_MAIN(WindowTeachingTest)
#include "window_teaching_test.moc"
