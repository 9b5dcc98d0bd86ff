// The window as a document (issue 14): looking around never edits, editing is explicit, the
// title shows unsaved work, Save / Revert / the question before discarding keep it, hand edits
// survive setting changes or are set aside with an undoable notice, banners go when their
// cause goes, the view refits after a change, and Help opens the repository's own pages.
// Driven with real mouse and key events on the real window (offscreen).
#include <QAction>
#include <QCheckBox>
#include <QDialog>
#include <QFile>
#include <QMenuBar>
#include <QPushButton>
#include <QScreen>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <qcustomplot.h>

#include "app/gui/ConfigPanel.h"
#include "app/gui/FileMenu.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassPanel.h"
#include "core/session/ScheduleFiles.h"
#include "tests/common/ProgramLookup.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::gui;
using mario::test::indexOf;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");

QAction* action(MainWindow& window, const char* name) { return window.findChild<QAction*>(name); }

// A drag with real mouse events from the box of `name` on `device` to `dropTimeMs`.
void drag(MainWindow& window, int device, const char* name, double dropTimeMs) {
    views::GanttView* gantt = window.gantt();
    QWidget* plot = gantt->plotWidget();
    const Plan& plan = window.document()->current().plan;
    const QPoint from = plot->mapFrom(gantt, gantt->boxCenter({device, indexOf(plan, device, name)}));
    const QPoint to(plot->mapFrom(gantt, gantt->pointAt(device, dropTimeMs)).x(), from.y());
    QTest::mousePress(plot, Qt::LeftButton, {}, from);
    QTest::mouseMove(plot, (from + to) / 2);
    QTest::mouseMove(plot, to);
    QTest::mouseRelease(plot, Qt::LeftButton, {}, to);
}

std::vector<std::vector<Instruction>> programs(const Plan& plan) {
    std::vector<std::vector<Instruction>> out;
    for (const auto& device : plan.devices) out.push_back(device.program);
    return out;
}

}  // namespace

class DocumentTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    // Figure 2 copied into a scratch folder (Save writes back to it), shown on screen.
    QString showFigure2(MainWindow& window, const char* name = "figure2.config.json") {
        const QString path = dir_.filePath(name);
        QFile::remove(path);
        QFile::copy(kExamples + "/figure2.config.json", path);
        QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
        window.document()->setSynchronous(true);
        window.resize(1400, 900);
        window.show();
        if (!QTest::qWaitForWindowExposed(&window) || !window.openFile(path)) return {};
        return path;
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void aPanOnTheDense32DeviceScheduleLeavesThePlanUnchanged() {
        MainWindow window;
        window.document()->setSynchronous(true);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openFile(kExamples + "/gpt3-13b-chimera.config.json"));
        const auto before = programs(window.document()->current().plan);
        const double step = window.document()->current().result.makespan_ms;
        const QCPRange range = window.gantt()->plot()->xAxis->range();
        // A drag that starts on a compute box in the middle of device 15, as in the issue.
        const auto& lane = window.gantt()->timeline().lanes[15];
        const views::TimelineBox* box = &lane[lane.size() / 2];
        while (box->kind == views::BoxKind::Wait) ++box;
        QWidget* plot = window.gantt()->plotWidget();
        const QPoint from = plot->mapFrom(window.gantt(), window.gantt()->boxCenter({15, box->program_index}));
        QVERIFY(window.gantt()->boxAt(window.gantt()->boxCenter({15, box->program_index})));
        QTest::mousePress(plot, Qt::LeftButton, {}, from);
        QTest::mouseMove(plot, from + QPoint(75, 0));
        QTest::mouseMove(plot, from + QPoint(150, 0));
        QTest::mouseRelease(plot, Qt::LeftButton, {}, from + QPoint(150, 0));
        QCOMPARE(programs(window.document()->current().plan), before);
        QCOMPARE(window.document()->current().result.makespan_ms, step);
        QCOMPARE(window.document()->undoStack()->count(), 0);
        QVERIFY(!window.document()->isModified());
        QVERIFY(window.gantt()->plot()->xAxis->range().lower < range.lower);  // it panned instead
    }

    void editModeMovesABoxAndCtrlYRedoes() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        window.document()->setPasses({}, "base");
        QAction* editMode = action(window, "editMode");
        QVERIFY(editMode && !editMode->isChecked());
        drag(window, 1, "1F3", 5.0);  // navigation: nothing moves
        QCOMPARE(window.document()->state().edits.size(), std::size_t(0));
        editMode->trigger();
        QVERIFY(window.gantt()->editMode());
        drag(window, 1, "1F3", 5.0);  // base 1F1B: into device 1's idle time before B0
        QCOMPARE(window.document()->state().edits.size(), std::size_t(1));
        const auto moved = programs(window.document()->current().plan);
        QVERIFY(indexOf(window.document()->current().plan, 1, "1F3") <
                indexOf(window.document()->current().plan, 1, "1B0"));
        action(window, "undo")->trigger();
        QCOMPARE(window.document()->state().edits.size(), std::size_t(0));
        QVERIFY(action(window, "redo")->shortcuts().contains(QKeySequence(Qt::CTRL | Qt::Key_Y)));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_Y, Qt::ControlModifier);
        QCOMPARE(programs(window.document()->current().plan), moved);
    }

    void theTitleShowsUnsavedWorkAndCtrlSSavesIt() {
        MainWindow window;
        const QString path = showFigure2(window);
        QVERIFY(!path.isEmpty());
        QVERIFY(window.windowTitle().startsWith("figure2.config.json"));
        QVERIFY(!window.isWindowModified());
        window.passPanel()->checkBox(PassId::Prepose)->click();
        QVERIFY(window.isWindowModified());
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);
        QVERIFY(!window.isWindowModified());
        // The file on disk now holds three passes, not four.
        const OpenedSchedule reread = openSchedule(path.toStdString(), window.document()->presets());
        QVERIFY2(reread.ok(), reread.error.c_str());
        QCOMPARE(reread.input.passes, window.document()->state().passes);
        QCOMPARE(reread.input.passes.size(), std::size_t(3));
        window.document()->undoStack()->undo();  // back past the save: unsaved again
        QVERIFY(window.isWindowModified());
    }

    void handEditsFromAConfigAreSavedAsAPlan() {
        MainWindow window;
        const QString path = showFigure2(window);
        window.document()->setPasses({}, "base");
        window.gantt()->setEditMode(true);
        drag(window, 1, "1F3", 5.0);
        QCOMPARE(window.document()->state().edits.size(), std::size_t(1));
        QStringList suggested;
        const QString plan = dir_.filePath("edited.mario.json");
        window.fileMenu()->setSaveAsAsker([&](const QString& offer) {
            suggested << offer;
            return plan;
        });
        QVERIFY(window.fileMenu()->save());  // a config cannot hold the edit: Save asks for a plan
        QCOMPARE(suggested.size(), 1);
        QVERIFY2(suggested.first().endsWith("figure2.mario.json"), qPrintable(suggested.first()));
        QCOMPARE(window.document()->path(), plan);
        const OpenedSchedule reread = openSchedule(plan.toStdString(), window.document()->presets());
        QVERIFY2(reread.ok(), reread.error.c_str());
        QCOMPARE(programs(reread.input.source), programs(window.document()->current().plan));
    }

    void quittingWithChangesAsksAndCancelKeepsTheWindow() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        QStringList asked;
        DiscardChoice answer = DiscardChoice::Cancel;
        window.fileMenu()->setDiscardAsker([&](const QString& document, const QString& what) {
            asked << document + ": " + what;
            return answer;
        });
        QVERIFY(window.close());  // nothing changed: no question
        QVERIFY(asked.isEmpty());
        window.show();
        window.passPanel()->checkBox(PassId::Overlap)->click();
        QVERIFY(!window.close());
        QCOMPARE(asked, QStringList{"figure2.config.json: quit"});
        QVERIFY(window.isVisible());
        // Revert asks too, and Discard brings the file's four passes back.
        answer = DiscardChoice::Discard;
        QVERIFY(action(window, "revert")->isEnabled());
        action(window, "revert")->trigger();
        QCOMPARE(window.document()->state().passes.size(), std::size_t(4));
        QVERIFY(!window.isWindowModified());
        window.passPanel()->checkBox(PassId::Overlap)->click();
        QVERIFY(window.close());  // Discard
        QCOMPARE(asked.size(), 3);
    }

    void revertAsksOnlyDiscardOrCancelAndSaveAsHasCtrlShiftS() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        QVERIFY(action(window, "saveAs")->shortcuts().contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)));
        window.passPanel()->checkBox(PassId::Overlap)->click();
        // The real box: saving before reverting would make the revert a no-op, so no Save.
        QStringList buttons;
        QTimer::singleShot(0, [&] {
            auto* box = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            if (!box) return;
            for (QPushButton* button : box->findChildren<QPushButton*>()) buttons << button->objectName();
            if (auto* cancel = box->findChild<QPushButton*>("cancel")) cancel->click();
        });
        action(window, "revert")->trigger();
        buttons.sort();
        QCOMPARE(buttons, (QStringList{"cancel", "discard"}));
        QVERIFY(window.isWindowModified());  // Cancel kept the work
        window.fileMenu()->setDiscardAsker([](const QString&, const QString&) { return DiscardChoice::Discard; });
    }

    void handEditsSurviveASettingChangeOrAreSetAsideWithAnUndoableNotice() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        window.document()->setPasses({}, "base");
        window.gantt()->setEditMode(true);
        drag(window, 1, "1F3", 5.0);
        QCOMPARE(window.document()->state().edits.size(), std::size_t(1));
        Config config = *window.document()->state().config;
        config.memory_limit_bytes = 1e9;  // does not touch the programs: the edit still applies
        emit window.configPanel()->configEdited(config);
        QCOMPARE(window.document()->current().skipped_edits.size(), std::size_t(0));
        QVERIFY(indexOf(window.document()->current().plan, 1, "1F3") <
                indexOf(window.document()->current().plan, 1, "1B0"));
        QVERIFY(window.noticeText().isEmpty());
        config.microbatches = 3;  // micro-batch 3 is gone: the edit of 1F3 cannot apply
        emit window.configPanel()->configEdited(config);
        QVERIFY2(window.noticeText().contains("1F3"), qPrintable(window.noticeText()));
        auto* undo = window.findChild<QPushButton*>("noticeUndo");
        QVERIFY(undo && undo->isVisible());
        QTest::mouseClick(undo, Qt::LeftButton);
        QVERIFY(window.noticeText().isEmpty());
        QCOMPARE(window.document()->state().config->microbatchCount(), 4);
        QVERIFY(indexOf(window.document()->current().plan, 1, "1F3") <
                indexOf(window.document()->current().plan, 1, "1B0"));
    }

    void theErrorBannerGoesWhenItsCauseGoes() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        Config config = *window.document()->state().config;
        Config bad = config;
        bad.parallel.pp = 0;
        emit window.configPanel()->configEdited(bad);
        QVERIFY(!window.errorText().isEmpty());
        config.microbatches = 8;
        emit window.configPanel()->configEdited(config);
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
    }

    void theViewRefitsAfterAToggleUnlessTheUserZoomed() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        QCPAxis* time = window.gantt()->plot()->xAxis;
        QCOMPARE(time->range().upper, 1.01 * 22);
        window.passPanel()->checkBox(PassId::Prepose)->click();  // 22 → 23: the end must stay visible
        QCOMPARE(window.document()->current().result.makespan_ms, 23.0);
        QCOMPARE(time->range().upper, 1.01 * 23);
        window.gantt()->setTimeRange(2, 6);  // the user zooms in: toggles keep the view
        window.passPanel()->checkBox(PassId::Prepose)->click();
        QCOMPARE(time->range().lower, 2.0);
        QCOMPARE(time->range().upper, 6.0);
    }

    // Issue 14: the window could not be narrower than 1038 px, and at QT_SCALE_FACTOR=2 it
    // opened at 3000×1900 on a 1920×1080 screen.
    void theWindowFitsA1024By700ScreenAndOpensWithinTheScreen() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        window.resize(1024, 700);
        QTRY_COMPARE(window.size(), QSize(1024, 700));
        QVERIFY(window.gantt()->plotWidget()->width() >= 400);  // the charts keep most of the width
        QVERIFY(window.headlineText().contains("step 22 units"));
        MainWindow fresh;  // the size a new window asks for, before anyone resizes it
        const QSize screen = QGuiApplication::primaryScreen()->availableSize();
        QVERIFY(fresh.width() <= screen.width() && fresh.height() <= screen.height());
    }

    void helpShowsTheGlossaryAndAbout() {
        MainWindow window;
        QVERIFY(!showFigure2(window).isEmpty());
        for (const char* name : {"keysHelp", "glossary", "about"}) {
            QVERIFY2(action(window, name), name);
            action(window, name)->trigger();
        }
        auto* glossary = window.findChild<QDialog*>("glossaryWindow");
        QVERIFY(glossary && glossary->isVisible() && !glossary->isModal());
        const QString text = glossary->findChild<QTextBrowser*>("helpText")->toPlainText();
        QVERIFY2(text.contains("0R0") && text.contains("waiting (RECV)"), qPrintable(text.left(200)));
        const QString keys = window.findChild<QDialog*>("keysWindow")->findChild<QTextBrowser*>()->toPlainText();
        QVERIFY(keys.contains("Shift+drag"));
        QVERIFY(window.findChild<QDialog*>("aboutWindow")->isVisible());
        // A link to another page of docs/ opens it: the glossary's link to hide-recompute.md.
        auto* browser = glossary->findChild<QTextBrowser*>("helpText");
        emit browser->anchorClicked(QUrl(QStringLiteral("hide-recompute.md")));
        QVERIFY2(browser->toPlainText().contains("The recompute bound"), qPrintable(browser->toPlainText().left(200)));
    }
};

QTEST_MAIN(DocumentTest)
#include "document_test.moc"
