#pragma once
// Random user actions on the real window through real key and mouse events: pass toggles,
// scheme and depth changes, zoom and pan keys, hand edits by Ctrl+drag, undo and redo, the pass
// stepper, the compare window, the tuner, opening other examples. The window soak
// (tests/bench/window_soak.cpp, which times the GUI thread's gaps) and its ctest
// (tests/app/window_soak_test.cpp, which judges what the window keeps) both drive it.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QSpinBox>
#include <QString>
#include <QTest>
#include <QWidget>
#include <algorithm>
#include <random>
#include <utility>

#include "app/gui/CompareWindow.h"
#include "app/gui/ConfigPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassPanel.h"
#include "app/gui/PassStepper.h"
#include "app/gui/TunerPanel.h"
#include "core/passes/PassRegistry.h"
#include "views/GanttView.h"

#include <qcustomplot.h>

namespace mario::bench {

class WindowSoakActions {
public:
    WindowSoakActions(gui::MainWindow& window, unsigned seed, QString examples)
        : window_(window), random_(seed), examples_(std::move(examples)) {}

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
        gui::PassStepper* s = window_.stepper();
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
            if (qobject_cast<gui::CompareWindow*>(top) && top->isVisible()) top->close();
        return "compare and close";
    }
    const char* tuner() {
        gui::TunerPanel* panel = window_.tuner();
        panel->show();
        QTest::qWait(20 + pick(100));
        panel->close();
        return "tuner open and close";
    }
    const char* openExample() {
        const QStringList files = QDir(examples_).entryList({"*.config.json"}, QDir::Files);
        if (!files.isEmpty()) window_.openFile(examples_ + "/" + files[pick(int(files.size()))]);
        return "open an example";
    }
    const char* wheel() {
        QTest::keyClick(window_.gantt()->plot(), pick(2) ? Qt::Key_W : Qt::Key_S);
        return "zoom";
    }

    gui::MainWindow& window_;
    std::mt19937 random_;
    QString examples_;  // the folder of configs "open an example" picks from
};

}  // namespace mario::bench
