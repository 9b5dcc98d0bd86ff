// MainWindow's menus and toolbar, apart from its layout and behaviour (MainWindow.cpp):
// File (FileMenu), Edit, View, Tools, Help and the timeline toolbar. Every action has an
// object name; tests find them by it (the titles are translated).
#include <QActionGroup>
#include <QCoreApplication>
#include <QFileDialog>
#include <QMenuBar>
#include <QToolBar>

#include "app/gui/ExecutorProbe.h"
#include "app/gui/FileMenu.h"
#include "app/gui/HelpMenu.h"
#include "app/gui/MainWindow.h"
#include "app/gui/TunerPanel.h"
#include "views/GanttOverview.h"
#include "views/GanttView.h"

namespace mario::gui {

void MainWindow::buildMenus() {
    files_ = new FileMenu(this, &document_, menuBar());
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    // Not the stack's own actions: Undo also cancels a change still computing (it is not in
    // the history yet), and both name the step as QUndoStack's would.
    QAction* undo = new QAction(this);
    connect(undo, &QAction::triggered, &document_, &ScheduleDocument::undo);
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = new QAction(this);
    connect(redo, &QAction::triggered, &document_, &ScheduleDocument::redo);
    auto refresh = [this, undo, redo] {
        const QUndoStack* stack = document_.undoStack();
        const QString changing = document_.changeComputing();
        undo->setEnabled(stack->canUndo() || !changing.isEmpty());
        undo->setText(!changing.isEmpty() ? tr("&Undo %1").arg(changing)
                      : stack->canUndo()  ? tr("&Undo %1").arg(stack->undoText())
                                          : tr("&Undo"));
        redo->setEnabled(stack->canRedo());
        redo->setText(stack->canRedo() ? tr("&Redo %1").arg(stack->redoText()) : tr("&Redo"));
    };
    connect(document_.undoStack(), &QUndoStack::indexChanged, this, refresh);
    connect(document_.undoStack(), &QUndoStack::cleanChanged, this, refresh);
    connect(&document_, &ScheduleDocument::computationStarted, this, refresh);
    connect(&document_, &ScheduleDocument::computationEnded, this, refresh);
    refresh();
    // Ctrl+Shift+Z (the platform's) and Ctrl+Y, which users of other editors expect.
    QList<QKeySequence> redoKeys = QKeySequence::keyBindings(QKeySequence::Redo);
    if (!redoKeys.contains(QKeySequence(tr("Ctrl+Y")))) redoKeys.append(QKeySequence(tr("Ctrl+Y")));
    redo->setShortcuts(redoKeys);
    undo->setObjectName("undo");
    redo->setObjectName("redo");
    edit->setObjectName("editMenu");
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    editMode_ = edit->addAction(tr("&Edit mode (drag boxes to move them)"));
    editMode_->setObjectName("editMode");
    editMode_->setIconText(tr("Edit mode"));  // the toolbar's shorter name
    editMode_->setCheckable(true);
    editMode_->setShortcut(QKeySequence(Qt::Key_E));
    editMode_->setToolTip(tr("Edit mode (E): drag a box to move that instruction. Off: drags pan. Ctrl+drag "
                             "moves a box once without it."));
    connect(editMode_, &QAction::toggled, gantt_, &views::GanttView::setEditMode);
    connect(gantt_, &views::GanttView::editModeChanged, editMode_, &QAction::setChecked);

    // Object names: tests find menus and actions by them (the titles are translated).
    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->setObjectName("viewMenu");
    view->addAction(tr("&Compare with the base schedule"), QKeySequence(tr("Ctrl+K")), this,
                    [this] { compareWithBase(); })
        ->setObjectName("compareWithBase");
    view->addAction(tr("Compare with a &file…"), this,
                    [this] {
                        const QString path = QFileDialog::getOpenFileName(this, tr("Compare with"), QString(),
                                                                          tr("Mario files (*.json)"));
                        if (!path.isEmpty()) compareWithFile(path);
                    })
        ->setObjectName("compareWithFile");
    QAction* fit = view->addAction(tr("&Fit to view"), QKeySequence(Qt::Key_F), gantt_, &views::GanttView::fitToView);
    fit->setObjectName("fitToView");
    QMenu* colors = view->addMenu(tr("&Colour boxes by"));
    auto* colorGroup = new QActionGroup(this);
    for (views::ColorMode mode : views::allColorModes()) {
        QAction* choice = colors->addAction(views::labelOf(mode), this, [this, mode] { gantt_->setColorMode(mode); });
        choice->setObjectName(QStringLiteral("colorBy%1").arg(int(mode)));
        choice->setCheckable(true);
        choice->setChecked(mode == gantt_->colorMode());
        colorGroup->addAction(choice);
    }
    QAction* critical = view->addAction(tr("C&ritical path"));
    critical->setObjectName("criticalPath");
    critical->setCheckable(true);
    critical->setShortcut(QKeySequence(Qt::Key_C));
    critical->setToolTip(tr("Critical path (C): the chain of instructions and transfers that ends last; shortening "
                            "anything else does not shorten the step"));
    connect(critical, &QAction::toggled, gantt_, &views::GanttView::setShowCriticalPath);
    QAction* boundChain = boundChain_ = view->addAction(tr("&Bound chain"));
    boundChain->setObjectName("boundChain");
    boundChain->setCheckable(true);
    boundChain->setShortcut(QKeySequence(Qt::Key_B));
    boundChain->setEnabled(false);  // until a schedule with hide has its bound
    boundChain->setToolTip(tr("Bound chain (B), with hide: the chain of work whose recomputations no placement "
                              "within hide's budget can hide; along it the step is at least the recompute bound"));
    connect(boundChain, &QAction::toggled, gantt_, &views::GanttView::setShowBoundChain);
    // One chain at a time: both are drawn the same way.
    connect(critical, &QAction::toggled, boundChain, [boundChain](bool on) {
        if (on) boundChain->setChecked(false);
    });
    connect(boundChain, &QAction::toggled, critical, [critical](bool on) {
        if (on) critical->setChecked(false);
    });
    QAction* overview = view->addAction(tr("&Overview strip"));
    overview->setObjectName("overviewStrip");
    overview->setCheckable(true);
    overview->setChecked(true);
    overview->setToolTip(tr("The whole step in a strip under the chart, with a rectangle over what the chart shows"));
    connect(overview, &QAction::toggled, overview_, &QWidget::setVisible);
    shadeBubbles_ = view->addAction(tr("&Shade bubbles"));
    shadeBubbles_->setObjectName("shadeBubbles");
    shadeBubbles_->setCheckable(true);
    connect(shadeBubbles_, &QAction::toggled, gantt_, &views::GanttView::setShadeBubbles);
    QAction* cover = view->addAction(tr("&Hidden and exposed Rs"));
    cover->setObjectName("recomputeCover");
    cover->setCheckable(true);
    cover->setShortcut(QKeySequence(Qt::Key_H));
    cover->setToolTip(tr("Hidden and exposed Rs (H): green, a recomputation that ran while its device waited for a "
                         "message anyway (free); red, one that ran with the data already there, so the step waited "
                         "for it; amber, part of each"));
    connect(cover, &QAction::toggled, gantt_, &views::GanttView::setShadeRecompute);

    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    tools->setObjectName("toolsMenu");
    tools
        ->addAction(tr("&Tune…"), QKeySequence(tr("Ctrl+T")), this,
                    [this] {
                        tuner()->show();
                        tuner()->raise();
                    })
        ->setObjectName("tune");
    // Sweeps of one knob against step, MFU and peak, in a dock beside the charts (issue 41).
    tools->addAction(tr("&What-if…"), QKeySequence(tr("Ctrl+I")), this, [this] { whatIf(); })
        ->setObjectName("whatIf");
    // Live profiling: the current schedule on CPU threads, or on one GPU (below).
    tools->addAction(tr("Run on &CPU (executor)"), this, [this] { runLive(tr("Run on CPU"), {}); })
        ->setObjectName("runOnCpu");
    // One GPU, each pipeline device on its own SM partition; disabled, with the reason as its
    // tooltip, until the executor says it can run CUDA (it is asked in the background).
    runOnGpu_ = tools->addAction(tr("Run on one &GPU (executor)"), this,
                                 [this] { runLive(tr("Run on one GPU"), gpuRunArguments(*executorProbe_)); });
    runOnGpu_->setObjectName("runOnGpu");
    executorProbe_ = new ExecutorProbe(this);
    connect(executorProbe_, &ExecutorProbe::answered, this, [this] { describeGpuAction(runOnGpu_, *executorProbe_); });
    describeGpuAction(runOnGpu_, *executorProbe_);
    executorProbe_->ask(ExecutorProbe::findExecutable(QCoreApplication::applicationDirPath()));
    addHelpMenu(this, menuBar());

    auto* toolbar = addToolBar(tr("Timeline"));
    toolbar->setObjectName("timelineToolbar");
    toolbar->addAction(editMode_);
    toolbar->addAction(fit);
    toolbar->addAction(shadeBubbles_);
    toolbar->addAction(critical);
    toolbar->addAction(boundChain);
}

}  // namespace mario::gui
