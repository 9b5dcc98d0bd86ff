// The What-if settings kept with the document (issue 41): typed into the view with real keys,
// saved with Ctrl+S into the config's "what_if" section, held by the autosave, and back in the
// fields of a new window that opens the file. The section never changes a schedule: typing
// computes nothing, and `mario simulate` (the real CLI binary) prints the same before and after.
#include <QComboBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "app/gui/FileMenu.h"
#include "app/gui/MainWindow.h"
#include "app/gui/ScheduleDocument.h"
#include "app/gui/SessionAutosave.h"
#include "app/gui/WhatIfPanel.h"
#include "tests/app/JsonFiles.h"

using namespace mario;
using namespace mario::gui;

namespace {

// The paper's Figure 2 (unit costs): small, so the CLI runs in a blink.
const QString kFigure2 = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/figure2.config.json");

// `mario simulate FILE --json`: its exit status and what it printed, less the timings of the
// run itself (the "*_us" fields), which differ from run to run.
std::pair<int, QByteArray> simulate(const QString& path) {
    QProcess cli;
    cli.start(MARIO_CLI_BIN, {"simulate", path, "--json"});
    if (!cli.waitForFinished(60000)) return {-1, {}};
    const QByteArray out = cli.readAllStandardOutput();
    QJsonObject result = QJsonDocument::fromJson(out).object();
    for (const QString& key : result.keys())
        if (key.endsWith("_us")) result.remove(key);
    return {cli.exitCode(), result.isEmpty() ? out + cli.readAllStandardError() : QJsonDocument(result).toJson()};
}

void typeInto(QLineEdit* edit, const QString& text) {
    QTest::mouseClick(edit, Qt::LeftButton);
    QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(edit, text);
}

}  // namespace

class WhatIfSavedTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    // A copy of Figure 2 to save over, and a window on it with the What-if view open.
    static WhatIfPanel* open(MainWindow& window, const QString& path) {
        window.document()->setSynchronous(true);
        window.show();
        if (!QTest::qWaitForWindowExposed(&window) || !window.openFile(path)) return nullptr;
        QTest::keyClick(&window, Qt::Key_I, Qt::ControlModifier);
        return window.whatIf();
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void typedSettingsAreSavedAutosavedAndComeBack() {
        const QString file = dir_.filePath("figure2.config.json");
        QVERIFY(QFile::copy(kFigure2, file));
        const auto before = simulate(file);
        QCOMPARE(before.first, 0);

        QString knob2, autosavePath;
        {
            MainWindow window;
            window.document()->enableAutosave(dir_.filePath("autosave"));
            WhatIfPanel* panel = open(window, file);
            QVERIFY(panel);
            QVERIFY2(!window.document()->whatIf(), "a config without the section brings none");
            QSignalSpy computing(window.document(), &ScheduleDocument::computationStarted);
            QSignalSpy computed(window.document(), &ScheduleDocument::computed);
            const int undoSteps = window.document()->undoStack()->count();

            typeInto(panel->valuesEdit(), "1,2");
            panel->secondKnobBox()->setFocus(Qt::TabFocusReason);
            QTest::keyClick(panel->secondKnobBox(), Qt::Key_Down);    // "(none)" → the first knob
            knob2 = panel->secondKnobBox()->currentData().toString();
            QVERIFY(!knob2.isEmpty());
            typeInto(panel->secondValuesEdit(), "2,4");
            typeInto(panel->schemesEdit(), "1f1b,zb-v");
            typeInto(panel->passSetsEdit(), "none;checkpoint");

            // Settings, not a schedule: nothing computed, no undo step, but unsaved work.
            QCOMPARE(computing.count(), 0);
            QCOMPARE(computed.count(), 0);
            QCOMPARE(window.document()->undoStack()->count(), undoSteps);
            QVERIFY(window.document()->isModified());

            window.document()->autosave()->waitForPendingWrite();
            autosavePath = window.document()->autosave()->path();
            const QJsonObject autosaved = test::readJsonObject(autosavePath)["config"].toObject()["what_if"].toObject();
            QCOMPARE(autosaved["values"].toString(), QStringLiteral("1,2"));
            QCOMPARE(autosaved["knob2"].toString(), knob2);
            QCOMPARE(autosaved["passes"].toString(), QStringLiteral("none;checkpoint"));

            window.activateWindow();
            QVERIFY(QTest::qWaitForWindowActive(&window));
            QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);  // Save, in place
            QVERIFY(!window.document()->isModified());
            window.document()->discardAutosave();
        }
        const QJsonObject saved = test::readJsonObject(file)["what_if"].toObject();
        QCOMPARE(saved["knob"].toString(), QStringLiteral("parallel.micro_batch_size"));
        QCOMPARE(saved["values"].toString(), QStringLiteral("1,2"));
        QCOMPARE(saved["knob2"].toString(), knob2);
        QCOMPARE(saved["values2"].toString(), QStringLiteral("2,4"));
        QCOMPARE(saved["schemes"].toString(), QStringLiteral("1f1b,zb-v"));
        QCOMPARE(saved["passes"].toString(), QStringLiteral("none;checkpoint"));

        // The CLI ignores the section: the same output, byte for byte, as before the save.
        const auto after = simulate(file);
        QCOMPARE(after.first, 0);
        QCOMPARE(after.second, before.second);

        MainWindow reopened;
        WhatIfPanel* panel = open(reopened, file);
        QVERIFY(panel);
        QCOMPARE(panel->knobBox()->currentData().toString(), QStringLiteral("parallel.micro_batch_size"));
        QCOMPARE(panel->valuesEdit()->text(), QStringLiteral("1,2"));
        QCOMPARE(panel->secondKnobBox()->currentData().toString(), knob2);
        QCOMPARE(panel->secondValuesEdit()->text(), QStringLiteral("2,4"));
        QCOMPARE(panel->schemesEdit()->text(), QStringLiteral("1f1b,zb-v"));
        QCOMPARE(panel->passSetsEdit()->text(), QStringLiteral("none;checkpoint"));
        QVERIFY(!reopened.document()->isModified());
    }

    // A config without the section opens as before: the defaults, and the file, once saved
    // untouched, gets no section.
    void aConfigWithoutTheSectionOpensAsBefore() {
        const QString file = dir_.filePath("plain.config.json");
        QVERIFY(QFile::copy(kFigure2, file));
        MainWindow window;
        WhatIfPanel* panel = open(window, file);
        QVERIFY(panel);
        QCOMPARE(panel->settings(), WhatIfSettings{});
        QVERIFY(!window.document()->isModified());
        QString error;
        QVERIFY2(window.document()->saveAs(file, &error), qPrintable(error));
        QVERIFY(!test::readJsonObject(file).contains("what_if"));
    }

    // A bad value is one line naming the field, from the window and the CLI alike.
    void aBadValueIsOneLineNamingTheField() {
        QJsonObject config = test::readJsonObject(kFigure2);
        config["what_if"] = QJsonObject{{"metric", "speed"}};
        const QString file = dir_.filePath("bad.config.json");
        QVERIFY(test::writeJsonObject(file, config));
        const auto cli = simulate(file);
        QVERIFY(cli.first != 0);
        QVERIFY2(cli.second.contains("what_if.metric: expected \"throughput\" or \"step\" (got \"speed\")"),
                 cli.second.constData());
        QCOMPARE(cli.second.trimmed().count('\n'), 0);
        config["what_if"] = QJsonObject{{"values", 4}};
        QVERIFY(test::writeJsonObject(file, config));
        QVERIFY2(simulate(file).second.contains("what_if.values:"), simulate(file).second.constData());
    }
};

QTEST_MAIN(WhatIfSavedTest)
#include "what_if_saved_test.moc"
