// The window soak's actions (tests/bench/WindowSoakActions.h: random key and mouse events on the
// real window, jobs finished some times and interrupted others) for a few seconds offscreen, on
// two seeds, judged on what the window keeps: it still shows a schedule, and whatever it refused
// reads as one line (docs/limits.md). The GUI thread's gaps are the benchmark's to report
// (tests/bench/window_soak.cpp), never a verdict here.
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTest>

#include "app/gui/MainWindow.h"
#include "tests/bench/WindowSoakActions.h"

using namespace mario;
using namespace mario::gui;

namespace {
const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");
}

class WindowSoakTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }  // autosaves in a test folder

    void randomActionsKeepTheScheduleAndOneLineRefusals_data() {
        QTest::addColumn<unsigned>("seed");
        QTest::newRow("seed 7") << 7u;
        QTest::newRow("seed 3") << 3u;
    }
    void randomActionsKeepTheScheduleAndOneLineRefusals() {
        QFETCH(unsigned, seed);
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openFile(kExamples + "/figure2.config.json"));
        QTRY_VERIFY_WITH_TIMEOUT(window.document()->hasSchedule(), 10000);  // its first schedule, computed off the GUI thread
        bench::WindowSoakActions soak(window, seed, kExamples);
        int actions = 0;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 2500) {
            soak.act();
            QTest::qWait(5 + actions % 40);  // let jobs finish sometimes, interrupt them other times
            ++actions;
            // Checked after every action, so a failure names the moment, not only the end.
            QVERIFY2(window.document()->hasSchedule(), qPrintable(QString("no schedule after action %1").arg(actions)));
            QVERIFY2(!window.errorText().contains(QLatin1Char('\n')), qPrintable(window.errorText()));
        }
        QVERIFY(actions > 10);
    }
};

QTEST_MAIN(WindowSoakTest)
#include "window_soak_test.moc"
