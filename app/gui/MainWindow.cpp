// MainWindow's layout and behaviour: the charts and the side panel, the document's signals, the
// banner and notice, opening files and showing what the document computed. Its menus are in
// MainWindowMenus.cpp, the windows and outputs it opens in MainWindowTools.cpp.
#include "app/gui/MainWindow.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QVBoxLayout>

#include "app/gui/ComputationProgress.h"
#include "app/gui/ConfigPanel.h"
#include "app/gui/FileMenu.h"
#include "app/gui/PassPanel.h"
#include "app/gui/PassStepper.h"
#include "app/gui/SessionAutosave.h"
#include "app/gui/SummaryPanel.h"
#include "core/passes/PassManager.h"
#include "core/passes/PassRegistry.h"
#include "core/sim/MemoryFit.h"
#include "views/GanttOverview.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"

namespace mario::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("Mario Workbench"));
    charts_ = new QWidget(this);
    auto* chartsLayout = new QVBoxLayout(charts_);
    chartsLayout->setContentsMargins(0, 0, 0, 0);
    banner_ = new QLabel(charts_);
    banner_->setObjectName("errorBanner");
    banner_->setWordWrap(true);
    banner_->setStyleSheet("QLabel { background: #fde7e9; color: #8a0010; padding: 6px; }");
    banner_->hide();
    buildNotice();
    auto* splitter = new QSplitter(Qt::Vertical, charts_);
    // The overview strip sits right under the Gantt it navigates, above the memory charts.
    auto* ganttPane = new QWidget(splitter);
    auto* ganttLayout = new QVBoxLayout(ganttPane);
    ganttLayout->setContentsMargins(0, 0, 0, 0);
    ganttLayout->setSpacing(2);
    gantt_ = new views::GanttView(ganttPane);
    overview_ = new views::GanttOverview(gantt_, ganttPane);
    ganttLayout->addWidget(gantt_, 1);
    ganttLayout->addWidget(overview_);
    memory_ = new views::MemoryChart(splitter);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    // 3 : 2 from the start, whatever the charts' size hints (their minimums: one legend row more
    // in the Gantt squeezed its 32 rows into 50 px); the handle stops at each side's minimum.
    splitter->setSizes({3000, 2000});
    splitter->setChildrenCollapsible(false);
    headline_ = new QLabel(charts_);
    headline_->setObjectName("headline");
    headline_->setTextFormat(Qt::RichText);
    headline_->setWordWrap(true);
    headline_->setStyleSheet("QLabel { padding: 4px 8px; }");
    chartsLayout->addWidget(headline_);
    chartsLayout->addWidget(banner_);
    chartsLayout->addWidget(notice_);
    chartsLayout->addWidget(splitter, 1);
    setCentralWidget(charts_);

    auto* side = new QWidget(this);
    auto* sideLayout = new QVBoxLayout(side);
    // The side panel is never smaller than its layout needs (the scroll area scrolls it):
    // without this the first layout after show() squeezed the settings when the summary was tall.
    sideLayout->setSizeConstraint(QLayout::SetMinimumSize);
    config_ = new ConfigPanel(document_.presets(), side);
    passes_ = new PassPanel(side);
    summary_ = new SummaryPanel(side);
    stepper_ = new PassStepper(side);
    sideLayout->addWidget(config_);
    sideLayout->addWidget(passes_);
    sideLayout->addWidget(stepper_);
    sideLayout->addWidget(summary_, 1);
    // A fixed-width side panel keeps the charts wide and the window at the size asked for;
    // it scrolls rather than squeezing its controls on short screens.
    side->setFixedWidth(330);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(side);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFixedWidth(348);
    auto* dock = new QDockWidget(tr("Schedule"), this);
    dock->setObjectName("sideDock");
    dock->setWidget(scroll);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    connect(&document_, &ScheduleDocument::computed, this, &MainWindow::showComputed);
    connect(&document_, &ScheduleDocument::statusMessage, this,
            [this](const QString& text) { statusBar()->showMessage(text, 15000); });
    connect(&document_, &ScheduleDocument::openFinished, this, &MainWindow::finishOpen);
    connect(gantt_, &views::GanttView::moveRequested, this, [this](int lane, int index, double time) {
        if (stepper_->currentStep() >= 0) {
            statusBar()->showMessage(tr("Leave the pass stepper (done) to edit the schedule"), 8000);
            stepper_->stop();
            return;
        }
        QString reason;
        if (!document_.requestMove(lane, index, time, &reason) && document_.hasSchedule()) {
            showError(tr("Move refused: %1").arg(reason));     // whole, where it cannot be missed
            gantt_->setTimeline(document_.shown()->timeline);  // snap back
        }
    });
    // While a box is dragged the ghost turns red with the reason beside it (the same check the
    // drop makes; the pass stepper's snapshots are not the document's plan, so no verdict there).
    gantt_->setDropChecker([this](int lane, int index, double time) {
        return stepper_->currentStep() >= 0 ? QString() : document_.dropRefusal(lane, index, time);
    });
    connect(&document_, &ScheduleDocument::editsSetAside, this, &MainWindow::showNotice);
    connect(gantt_, &views::GanttView::timeRangeChanged, memory_, &views::MemoryChart::setTimeRange);
    connect(stepper_, &PassStepper::showSnapshot, this, &MainWindow::showSnapshot);
    connect(passes_, &PassPanel::passToggled, &document_, &ScheduleDocument::setPassEnabled);
    connect(passes_, &PassPanel::paperPassesToggled, this, [this](bool on) {
        std::vector<PassId> passes;
        const auto& applied = document_.state().source.info.passes_applied;  // already in the plan
        if (on)
            for (PassId pass : paperPasses())
                if (std::find(applied.begin(), applied.end(), passInfo(pass).name) == applied.end())
                    passes.push_back(pass);
        for (PassId pass : document_.state().passes)
            if (isBeyondPaper(pass)) passes.push_back(pass);
        document_.setPasses(passes, on ? tr("Enable all passes") : tr("Disable all passes"));
    });
    connect(config_, &ConfigPanel::configEdited, this, [this](const Config& config) {
        QString error;
        if (!document_.setConfig(config, &error)) showError(error);
    });
    connect(&document_, &ScheduleDocument::changeFailed, this, &MainWindow::showError);
    // A cancelled or failed change: the panels the user edited show the state shown again.
    connect(&document_, &ScheduleDocument::computationEnded, this, [this] {
        config_->showConfig(document_.state().config);
        passes_->showPasses(document_.state().passes, document_.state().source.info.passes_applied);
    });
    buildMenus();
    progress_ = new ComputationProgress(&document_, this);
    statusBar()->addPermanentWidget(progress_);
    // 1500×950 where it fits; never larger than the screen's free area (high-DPI scales,
    // small laptop screens), so the window always opens whole.
    QSize size(1500, 950);
    if (const QScreen* screen = QGuiApplication::primaryScreen()) size = size.boundedTo(screen->availableSize() * 0.95);
    resize(size);
}

void MainWindow::buildNotice() {
    notice_ = new QWidget(charts_);
    notice_->setObjectName("notice");
    notice_->setStyleSheet("#notice { background: #fff4ce; } QLabel { color: #4d3b00; }");
    auto* layout = new QHBoxLayout(notice_);
    layout->setContentsMargins(6, 3, 6, 3);
    noticeText_ = new QLabel(notice_);
    noticeText_->setWordWrap(true);
    auto* undo = new QPushButton(tr("Undo"), notice_);
    undo->setObjectName("noticeUndo");
    auto* dismiss = new QPushButton(tr("Dismiss"), notice_);
    layout->addWidget(noticeText_, 1);
    layout->addWidget(undo);
    layout->addWidget(dismiss);
    notice_->hide();
    connect(undo, &QPushButton::clicked, this, [this] {
        notice_->hide();
        document_.undo();
    });
    connect(dismiss, &QPushButton::clicked, notice_, &QWidget::hide);
}

void MainWindow::showNotice(const QString& message) {
    noticeText_->setText(message);
    notice_->show();
}

QString MainWindow::noticeText() const { return notice_->isHidden() ? QString() : noticeText_->text(); }

QString MainWindow::errorText() const {
    return banner_->isVisible() || !banner_->isHidden() ? banner_->text() : QString();
}

QString MainWindow::headlineText() const { return headline_->text(); }

void MainWindow::showError(const QString& message) {
    banner_->setText(message);
    banner_->show();
    statusBar()->showMessage(message, 15000);
}

void MainWindow::clearError() {
    banner_->hide();
    banner_->clear();
}

bool MainWindow::openFile(const QString& path) {
    if (!document_.synchronous()) {
        document_.openAsync(path);
        return true;
    }
    QString error;
    const bool ok = document_.open(path, &error);
    finishOpen(path, ok, error);
    return ok;
}

void MainWindow::finishOpen(const QString& path, bool ok, const QString& error) {
    if (!ok) return showError(tr("Could not open %1: %2").arg(QFileInfo(path).fileName(), error));
    clearError();
    notice_->hide();
    files_->rememberRecent(path);
    // The keys to look around (W/A/S/D, +/−) work at once, without a click on the chart first.
    gantt_->setFocus(Qt::OtherFocusReason);
}

bool MainWindow::offerRestore(const QString& directory, const RestoreAsker& ask) {
    const QStringList orphans = SessionAutosave::orphans(directory);
    if (orphans.isEmpty()) return false;
    const QString& newest = orphans.first();
    switch (ask ? ask(newest) : askToRestore(this, newest)) {
        case RestoreChoice::Restore: return openFile(newest);
        case RestoreChoice::Discard: SessionAutosave::removeOrphan(newest); return false;
        case RestoreChoice::Later: return false;
    }
    return false;
}

// Everything shown was prepared with the schedule on the worker (ShownSchedule): the charts and
// the summary take shared pieces, so the switch costs the GUI thread milliseconds.
void MainWindow::showComputed() {
    const SharedShown shown = document_.shown();
    const ComputedSchedule& s = shown->schedule;
    banner_->hide();  // whatever it said was about an earlier state: the new one computed
    gantt_->setTimeBase(document_.timeBase());
    memory_->setTimeBase(document_.timeBase());
    gantt_->setBoundChain(shown->boundChain);
    boundChain_->setEnabled(s.hide_bound && s.hide_bound->bound_ms > 0);
    gantt_->setTimeline(shown->timeline);
    memory_->setMemory(shown->memory);
    summary_->showSchedule(shown, document_.timeBase());
    headline_->setText(summary_->headline());
    stepper_->setState(document_.sharedState());
    passes_->showPasses(document_.state().passes, document_.state().source.info.passes_applied);
    config_->showConfig(document_.state().config);
    statusBar()->showMessage(
        tr("Simulated %1 instructions in %2 ms").arg(s.plan.instructionCount()).arg(s.total_ms, 0, 'f', 1), 5000);
}

// The stepper's snapshot replaces the charts' content while stepping, and the summary and the
// headline say what the charts show (they kept the final schedule's numbers beside a step's
// chart); nullptr restores the document's schedule. Drags are ignored meanwhile (the plan shown
// is not the document's).
void MainWindow::showSnapshot(const PassStepSnapshot* snapshot) {
    const SharedShown shown = document_.shown();
    if (!snapshot) {
        gantt_->setHighlights({});
        gantt_->setShadeBubbles(shadeBubbles_ && shadeBubbles_->isChecked());
        if (shown && shown->schedule.ok) {
            gantt_->setBoundChain(shown->boundChain);
            gantt_->setTimeline(shown->timeline);
            memory_->setMemory(shown->memory);
            summary_->showSchedule(shown, document_.timeBase());
            headline_->setText(summary_->headline());
        }
        return;
    }
    gantt_->setBoundChain({});  // a step of the passes, not the plan the bound was taken of
    gantt_->setHighlights(snapshot->highlights);
    gantt_->setShadeBubbles(true);
    if (shown && shown->schedule.ok) {
        const SharedShown step = shownForStep(*snapshot, *shown);
        gantt_->setTimeline(step->timeline);
        memory_->setMemory(step->memory);
        summary_->showSchedule(step, document_.timeBase());
        headline_->setText(tr("<b>pass step %1 of %2</b> &nbsp;·&nbsp; %3")
                               .arg(stepper_->currentStep())
                               .arg(stepper_->stepCount() - 1)
                               .arg(summary_->headline()));
    }
    statusBar()->showMessage(snapshot->caption, 30000);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!files_->confirmDiscard(tr("quit"))) {
        event->ignore();  // Cancel, or a save that failed: the work stays open
        return;
    }
    document_.cancelComputation();
    document_.discardAutosave();  // a clean exit: nothing to offer back next time
    event->accept();
}

}  // namespace mario::gui
