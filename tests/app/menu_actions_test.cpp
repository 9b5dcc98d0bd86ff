// Every menu action (File, Edit, View, Tools, Help; the toolbar holds the same actions), and
// every pass toggle, applied to every bundled example on the real main window (offscreen).
// The actions are read from the menus, so a new action is covered without touching this
// file; only those that would block the test (a modal dialog), close the window, write into
// the source tree or start another program are skipped, each with its reason.
// Issue 10: View → Shade bubbles crashed (SIGSEGV in the legend layout) on the LLaMA-2 and
// GPT-3 examples, and so did double-clicking the tuner's best row for GPT-3 13B.
#include <QCheckBox>
#include <QDir>
#include <QMenu>
#include <QMenuBar>
#include <QStandardPaths>
#include <QTableView>
#include <QtTest>
#include <map>
#include <qcustomplot.h>

#include "app/gui/MainWindow.h"
#include "app/gui/PassPanel.h"
#include "app/gui/TuneResultModel.h"
#include "app/gui/TuneResultSortProxy.h"
#include "app/gui/TunerPanel.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"
#include "views/PlotStyle.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");

// Actions left out, by object name, and why.
const std::map<QString, const char*> kSkipped = {
    {"open", "opens a modal file dialog (openFile itself is tested here and in workbench_test)"},
    {"save", "would write into the source tree's examples (Save is tested in document_test on a copy)"},
    {"saveAs", "opens a modal file dialog (tested in document_test with its path asker)"},
    {"revert", "asks in a modal box (tested in document_test with its asker)"},
    {"export", "opens a modal file dialog (exportTo is tested in workbench_outputs_test)"},
    {"quit", "closes the window under test (the question before quitting is tested in document_test)"},
    {"compareWithFile", "opens a modal file dialog (compareWithFile itself is tested in workbench_outputs_test)"},
    {"runOnCpu", "starts mario-executor, another program (tested in live_run_test)"},
    {"runOnGpu", "starts mario-executor, another program (tested in live_run_test)"},
};

QList<QAction*> actionsOf(const QMenu* menu) {
    QList<QAction*> actions;
    for (QAction* action : menu->actions()) {
        // Recent files open another file (after asking, in a modal box, when there are
        // changes); openFile is what they call, and it is tested on every example here.
        if (action->isSeparator() || action->objectName() == "recentFile") continue;
        if (action->menu()) actions += actionsOf(action->menu());
        else actions.append(action);
    }
    return actions;
}

// Draws everything as the screen would: the charts replot and the window paints.
void render(MainWindow& window) {
    QCoreApplication::processEvents();
    window.gantt()->plot()->replot();
    (void)window.grab();
}

// The legend layout is the part that crashed: each entry must be a real item, none lost.
void verifyLegend(QCustomPlot* plot, const char* where) {
    const QList<QCPAbstractLegendItem*> items = views::legendItems(plot->legend);
    for (QCPAbstractLegendItem* item : items) QVERIFY2(item && item->layout() == plot->legend, where);
}

}  // namespace

class MenuActionsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void everyMenuActionOnEveryExample_data() {
        QTest::addColumn<QString>("example");
        QTest::addColumn<QSize>("size");
        const QStringList examples = QDir(kExamples).entryList({"*.json"}, QDir::Files, QDir::Name);
        QVERIFY(examples.size() >= 4);
        for (const QString& name : examples)
            for (const QSize size : {QSize(1500, 950), QSize(1000, 700)})
                QTest::addRow("%s@%d", qPrintable(name), size.width()) << QDir(kExamples).filePath(name) << size;
    }

    void everyMenuActionOnEveryExample() {
        QFETCH(QString, example);
        QFETCH(QSize, size);
        MainWindow window;
        window.document()->setSynchronous(true);
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY2(window.openFile(example), qPrintable(window.errorText()));
        render(window);

        QList<QAction*> actions;
        for (const char* menu : {"fileMenu", "editMenu", "viewMenu", "toolsMenu", "helpMenu"}) {
            auto* found = window.menuBar()->findChild<QMenu*>(menu);
            QVERIFY2(found, menu);
            actions += actionsOf(found);
        }
        QSet<QString> names;
        for (QAction* action : actions) {
            QVERIFY2(!action->objectName().isEmpty(), qPrintable(action->text() + " has no object name"));
            names.insert(action->objectName());
        }
        for (const auto& [name, why] : kSkipped)
            QVERIFY2(names.contains(name), qPrintable(name + " is gone: update kSkipped"));

        auto apply = [&](QAction* action) {
            action->trigger();
            render(window);
            QVERIFY2(window.document()->hasSchedule(), qPrintable(action->objectName()));
            verifyLegend(window.gantt()->plot(), qPrintable(action->objectName()));
        };
        // Checkable actions on, every other action with them on, then the pass toggles, then off.
        QList<QAction*> checkable;
        for (QAction* action : actions)
            if (action->isCheckable() && !kSkipped.count(action->objectName())) checkable.append(action);
        for (QAction* action : checkable) apply(action);
        for (QAction* action : actions)
            if (!action->isCheckable() && !kSkipped.count(action->objectName())) apply(action);
        const QList<QCheckBox*> passBoxes = window.passPanel()->findChildren<QCheckBox*>();
        QVERIFY(passBoxes.size() >= 5);  // four passes, relax, and "all"
        for (QCheckBox* box : passBoxes) {
            for (int click = 0; click < 2; ++click) {
                box->click();
                render(window);
                QVERIFY2(window.document()->hasSchedule(), qPrintable(box->text()));
                verifyLegend(window.gantt()->plot(), qPrintable(box->text()));
            }
        }
        for (QAction* action : checkable) apply(action);
        // The window still draws a schedule with its legend: one entry per kind present.
        QVERIFY(!views::legendItems(window.gantt()->plot()->legend).isEmpty());
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
    }

    // Tools → Tune…, run, double-click the best row, then shade bubbles on what it opened.
    void theTunersBestRowOpensAndShades_data() {
        QTest::addColumn<QString>("example");
        for (const char* name : {"gpt3-13b-chimera.config.json", "llama2-13b-1f1b.config.json"})
            QTest::newRow(name) << QDir(kExamples).filePath(name);
    }

    void theTunersBestRowOpensAndShades() {
        QFETCH(QString, example);
        MainWindow window;
        window.document()->setSynchronous(true);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openFile(example));
        TunerPanel* panel = window.tuner();
        panel->show();
        QVERIFY(QTest::qWaitForWindowExposed(panel));
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isRunning(), 240000);
        QVERIFY(panel->proxy()->rowCount() > 0);
        QTableView* table = panel->table();
        const int undoSteps = window.document()->undoStack()->count();
        const QPoint at = table->visualRect(panel->proxy()->index(0, TuneResultModel::SchemeCol)).center();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QTRY_COMPARE(window.document()->undoStack()->count(), undoSteps + 1);
        render(window);
        auto* shade = window.findChild<QAction*>("shadeBubbles");
        QVERIFY(shade);
        for (int i = 0; i < 4; ++i) {
            shade->trigger();
            render(window);
            verifyLegend(window.gantt()->plot(), "shade bubbles");
        }
        QVERIFY(window.document()->hasSchedule());
    }
};

QTEST_MAIN(MenuActionsTest)
#include "menu_actions_test.moc"
