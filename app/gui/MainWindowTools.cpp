// MainWindow's other windows and outputs, apart from its layout and behaviour (MainWindow.cpp)
// and its menus (MainWindowMenus.cpp): the compare window, the tuner, the What-if view, a live
// run on the executor, and exports of the schedule shown.
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QGuiApplication>
#include <QScreen>
#include <QStatusBar>

#include "app/gui/ChartExport.h"
#include "app/gui/CompareWindow.h"
#include "app/gui/CsvDropQuestion.h"
#include "app/gui/ExecutorProbe.h"
#include "app/gui/LiveRun.h"
#include "app/gui/LiveRunWindow.h"
#include "app/gui/MainWindow.h"
#include "app/gui/TunerPanel.h"
#include "app/gui/WhatIfPanel.h"
#include "core/io/PlanJson.h"
#include "core/session/ScheduleFiles.h"

namespace mario::gui {

CompareWindow* MainWindow::compareWithBase() {
    if (!document_.hasSchedule()) return nullptr;
    const ComputedSchedule& s = document_.current();
    if (!compare_) compare_ = new CompareWindow(this);
    compare_->setSchedules({tr("this schedule"), s.plan, s.result},
                           {tr("the base schedule (no passes, no edits)"), document_.state().source, s.base},
                           document_.timeBase());
    clearError();  // an earlier failure (a compare with a bad file) no longer describes the screen
    compare_->show();
    compare_->raise();
    return compare_;
}

CompareWindow* MainWindow::compareWithFile(const QString& path) {
    if (!document_.hasSchedule()) return nullptr;
    // The same path as opening the file: checked by the validator, its own passes applied.
    const OpenedSchedule opened = openSchedule(path.toStdString(), document_.presets());
    auto other = opened.ok() ? prepareSchedule(opened.input, {.record_memory_curve = true})
                             : Result<PreparedSchedule>(makeError(opened.error));
    if (!other || other->result.deadlocked) {
        showError(tr("Could not compare with %1: %2")
                      .arg(QFileInfo(path).fileName(),
                           other ? tr("the plan deadlocks") : QString::fromStdString(other.error().message)));
        return nullptr;
    }
    const ComputedSchedule& s = document_.current();
    if (!compare_) compare_ = new CompareWindow(this);
    compare_->setSchedules({tr("this schedule"), s.plan, s.result},
                           {QFileInfo(path).fileName(), other->plan, other->result}, document_.timeBase());
    clearError();
    compare_->show();
    compare_->raise();
    return compare_;
}

bool MainWindow::exportTo(const QString& path) {
    // The CLI refuses a CSV without R unless told --drop-recompute; the window asks the same.
    if (path.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive) && document_.hasSchedule() &&
        !askToDropRecomputation(this, document_.state(), document_.current().plan)) {
        statusBar()->showMessage(tr("Export cancelled: %1 not written").arg(path), 8000);
        return false;
    }
    QString error, note;
    if (!exportSchedule(path, document_.state(), document_.current(), charts_, &error, &note)) {
        showError(error);
        return false;
    }
    clearError();
    statusBar()->showMessage(note.isEmpty() ? tr("Exported %1").arg(path) : tr("Exported %1; %2").arg(path, note),
                             5000);
    return true;
}

void MainWindow::runLive(const QString& what, const QStringList& extraArgs) {
    const QString exe = ExecutorProbe::findExecutable(QCoreApplication::applicationDirPath());
    const QString plan =
        QDir::temp().filePath(QStringLiteral("mario-live-%1.mario.json").arg(QCoreApplication::applicationPid()));
    if (!document_.hasSchedule() || !QFileInfo(exe).isExecutable())
        return showError(tr("%1: no schedule, or mario-executor not found next to the workbench").arg(what));
    // A live run measures milliseconds; a unit-cost plan predicts time units, so a deviation
    // between the two would mean nothing.
    if (document_.timeBase() == views::TimeBase::Units)
        return showError(tr("%1: this schedule uses unit costs (time units, not milliseconds), so measured times "
                            "cannot be compared with it; choose analytical or measured costs in the settings")
                             .arg(what));
    if (auto written = writePlanFile(document_.current().plan, plan.toStdString()); !written)
        return showError(QString::fromStdString(written.error().message));
    auto* live = new LiveRunWindow(this);
    live->setAttribute(Qt::WA_DeleteOnClose);
    live->setPlan(document_.current().plan, document_.current().result);
    const auto& config = document_.state().config;
    live->start(plan, exe, LiveRun::modelSpecFor(config ? config->profile : std::nullopt), extraArgs);
    clearError();
    live->show();
}

TunerPanel* MainWindow::tuner() {
    // A window of its own (it is large), parented so it closes with the workbench.
    if (!tuner_) {
        tuner_ = new TunerPanel(&document_, this);
        tuner_->setWindowFlag(Qt::Window);
        // Whole on the workbench's screen, centred: at its 1200×860 it opened partly off a
        // 1024×768 screen, with its table and buttons out of reach.
        if (const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen()) {
            const QRect free = screen->availableGeometry();
            const QSize size = tuner_->size().boundedTo(free.size() * 0.95);
            tuner_->resize(size);
            tuner_->move(free.center() - QPoint(size.width() / 2, size.height() / 2));
        }
    }
    return tuner_;
}

WhatIfPanel* MainWindow::whatIf() {
    if (!whatIf_) {
        // A dock, not a window: its charts sit beside the schedule a click on a point opens.
        auto* dock = new QDockWidget(tr("What-if"), this);
        dock->setObjectName("whatIfDock");
        whatIf_ = new WhatIfPanel(&document_, dock);
        dock->setWidget(whatIf_);
        addDockWidget(Qt::RightDockWidgetArea, dock);
        resizeDocks({dock}, {width() * 9 / 20}, Qt::Horizontal);
    }
    if (auto* dock = qobject_cast<QDockWidget*>(whatIf_->parentWidget())) {
        dock->show();
        dock->raise();
    }
    return whatIf_;
}

}  // namespace mario::gui
