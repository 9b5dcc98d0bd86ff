// A soak of the real window (issue 39's "done when"): for N seconds, random user actions through
// real key and mouse events — pass toggles, scheme and depth changes, zoom and pan keys, hand
// edits by Ctrl+drag, undo and redo, the pass stepper, the compare window, the tuner, opening
// other examples — while a 10 ms timer on the GUI thread measures how long it ever went without
// handling events. Not a test: run it under Xvfb and gdb (docs/testing.md#window-soak) and read
// its report; it exits 1 when a gap passed 200 ms and 2 when the window lost its schedule or
// said a refusal in more than one line, so a script can tell. With --kept-only the gaps are
// reported but not judged (timings are benchmarks, never test verdicts): ctest runs it so, a few
// seconds offscreen, as the test that the window keeps its schedule and says refusals in one line.
//   xvfb-run -a gdb -batch -ex run -ex bt --args build/tests/bench/mario_window_soak 300 [SEED]
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QSpinBox>
#include <QStandardPaths>
#include <string>
#include <QTest>
#include <QWidget>
#include <cstdio>
#include <map>
#include <random>

#include "app/gui/CompareWindow.h"
#include "app/gui/ConfigPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassPanel.h"
#include "app/gui/PassStepper.h"
#include "app/gui/TunerPanel.h"
#include "core/passes/PassRegistry.h"
#include "tests/bench/GuiGapMeter.h"
#include "views/GanttView.h"

#include <qcustomplot.h>

using namespace mario;
using namespace mario::gui;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");

class Soak {
public:
    Soak(MainWindow& window, unsigned seed) : window_(window), random_(seed) {}

    // One random action; returns its name for the report.
    const char* act() {
        switch (pick(12)) {
            case 0: return togglePass();
            case 1: return stepCombo(window_.configPanel()->schemeBox(), "scheme");
            case 2: return stepSpin(window_.configPanel()->pipelineBox(), "pipeline depth");
            case 3: return keyOnChart();
            case 4: return keyOnChart();
            case 5: return ctrlDrag();
            case 6: return undoRedo();
            case 7: return stepper();
            case 8: return compare();
            case 9: return tuner();
            case 10: return openExample();
            default: return wheel();
        }
    }

private:
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(random_); }
    QPoint somewhere(QWidget* w) {
        return {1 + pick(std::max(1, w->width() - 2)), 1 + pick(std::max(1, w->height() - 2))};
    }

    const char* togglePass() {
        const auto& passes = passTable();
        QCheckBox* box = window_.passPanel()->checkBox(passes[static_cast<std::size_t>(pick(int(passes.size())))].id);
        if (box && box->isVisible() && box->isEnabled())
            QTest::mouseClick(box, Qt::LeftButton, {}, QPoint(8, box->height() / 2));
        return "toggle a pass";
    }
    const char* stepCombo(QComboBox* combo, const char* name) {
        if (combo && combo->isEnabled()) QTest::keyClick(combo, pick(2) ? Qt::Key_Down : Qt::Key_Up);
        return name;
    }
    const char* stepSpin(QSpinBox* spin, const char* name) {
        if (spin && spin->isEnabled()) QTest::keyClick(spin, pick(2) ? Qt::Key_Up : Qt::Key_Down);
        return name;
    }
    const char* keyOnChart() {
        static const Qt::Key keys[] = {Qt::Key_W, Qt::Key_S, Qt::Key_A,    Qt::Key_D,     Qt::Key_F,
                                       Qt::Key_C, Qt::Key_B, Qt::Key_Plus, Qt::Key_Minus, Qt::Key_E};
        QWidget* plot = window_.gantt()->plot();
        plot->setFocus();
        QTest::keyClick(plot, keys[pick(10)]);
        return "key on the chart";
    }
    const char* ctrlDrag() {
        QWidget* plot = window_.gantt()->plot();
        const QPoint from = somewhere(plot), to = from + QPoint(pick(200) - 100, pick(20) - 10);
        QTest::mousePress(plot, Qt::LeftButton, Qt::ControlModifier, from);
        QTest::mouseMove(plot, (from + to) / 2);
        QTest::mouseMove(plot, to);
        QTest::mouseRelease(plot, Qt::LeftButton, Qt::ControlModifier, to);
        return "ctrl+drag a box";
    }
    const char* undoRedo() {
        QTest::keyClick(&window_, Qt::Key_Z, pick(3) ? Qt::ControlModifier : (Qt::ControlModifier | Qt::ShiftModifier));
        return "undo or redo";
    }
    const char* stepper() {
        PassStepper* s = window_.stepper();
        switch (pick(3)) {
            case 0: s->next(); break;
            case 1: s->previous(); break;
            default: s->stop();
        }
        return "pass stepper";
    }
    const char* compare() {
        QTest::keyClick(&window_, Qt::Key_K, Qt::ControlModifier);
        QTest::qWait(50);
        for (QWidget* top : QApplication::topLevelWidgets())
            if (qobject_cast<CompareWindow*>(top) && top->isVisible()) top->close();
        return "compare and close";
    }
    const char* tuner() {
        TunerPanel* panel = window_.tuner();
        panel->show();
        QTest::qWait(20 + pick(100));
        panel->close();
        return "tuner open and close";
    }
    const char* openExample() {
        const QStringList files = QDir(kExamples).entryList({"*.config.json"}, QDir::Files);
        if (!files.isEmpty()) window_.openFile(kExamples + "/" + files[pick(int(files.size()))]);
        return "open an example";
    }
    const char* wheel() {
        QTest::keyClick(window_.gantt()->plot(), pick(2) ? Qt::Key_W : Qt::Key_S);
        return "zoom";
    }

    MainWindow& window_;
    std::mt19937 random_;
};

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);  // autosaves in a test folder, not the user's
    const double seconds = argc > 1 ? std::atof(argv[1]) : 300;
    const unsigned seed = argc > 2 ? unsigned(std::atoi(argv[2])) : 1;
    const bool keptOnly = argc > 3 && std::string(argv[3]) == "--kept-only";
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    if (!QTest::qWaitForWindowExposed(&window) || !window.openFile(kExamples + "/figure2.config.json")) return 2;

    Soak soak(window, seed);
    bench::GuiGapMeter meter;
    std::map<std::string, int> counts;
    std::map<std::string, double> worst;  // the longest gap seen right after each kind of action
    double longest = 0;
    int actions = 0;
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < seconds * 1000) {
        meter.start();
        const std::string name = soak.act();
        QTest::qWait(5 + actions % 40);  // let jobs finish sometimes, interrupt them other times
        meter.stop();
        ++counts[name];
        ++actions;
        worst[name] = std::max(worst[name], meter.longestMs());
        longest = std::max(longest, meter.longestMs());
    }
    std::printf("window soak: %d actions in %.0f s (seed %u); the longest GUI-thread gap %.0f ms\n", actions,
                clock.elapsed() / 1000.0, seed, longest);
    std::printf("%-24s %8s %14s\n", "action", "times", "longest gap ms");
    for (const auto& [name, n] : counts) std::printf("%-24s %8d %14.0f\n", name.c_str(), n, worst[name]);
    // Nothing was lost on the way: whatever was refused, the window still shows a schedule, and
    // a refusal reads as one line in its banner (docs/limits.md).
    if (!window.document()->hasSchedule()) {
        std::printf("FAILED: the window no longer shows a schedule\n");
        return 2;
    }
    if (window.errorText().contains(QLatin1Char('\n'))) {
        std::printf("FAILED: the banner's error is more than one line: %s\n", qPrintable(window.errorText()));
        return 2;
    }
    return !keptOnly && longest > 200 ? 1 : 0;
}
