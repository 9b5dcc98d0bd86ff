#pragma once
// The workbench window: settings, passes and summary on the left; the Gantt timeline and
// the memory charts (sharing its time axis) in the middle; file, export and edit menus.
#include <QMainWindow>

#include "app/gui/RestoreOffer.h"
#include "app/gui/ScheduleDocument.h"

class QLabel;

namespace mario::views {
class GanttOverview;
class GanttView;
class MemoryChart;
}  // namespace mario::views

namespace mario::gui {

class ConfigPanel;
class ExecutorProbe;
class FileMenu;
class PassPanel;
class PassStepper;
class CompareWindow;
class ComputationProgress;
struct PassStepSnapshot;
class SummaryPanel;
class TunerPanel;
class WhatIfPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    ScheduleDocument* document() { return &document_; }
    views::GanttView* gantt() const { return gantt_; }
    views::GanttOverview* overview() const { return overview_; }  // the strip under the Gantt
    views::MemoryChart* memoryChart() const { return memory_; }
    PassPanel* passPanel() const { return passes_; }
    SummaryPanel* summary() const { return summary_; }
    PassStepper* stepper() const { return stepper_; }
    // Opens (or refreshes) the compare window: the current schedule against the base one
    // (no passes, no edits), or against another config or plan file.
    CompareWindow* compareWithBase();
    CompareWindow* compareWithFile(const QString& path);
    ConfigPanel* configPanel() const { return config_; }
    TunerPanel* tuner();           // the schedule tuner window (Tools → Tune…), created on first use
    // The What-if view (Tools → What-if): a dock beside the charts, created on first use and
    // shown; the panel inside it.
    WhatIfPanel* whatIf();
    QString errorText() const;     // the error banner, empty when none
    QString headlineText() const;  // the one-line summary above the charts

    // Opens a file; on failure the banner says why and the current session stays. With an
    // asynchronous document (the real window) the file is read and computed on a worker
    // thread behind the progress bar with Cancel, and true means "started".
    bool openFile(const QString& path);
    // The status bar's progress and Cancel for every computation: opens, settings, toggles, undo.
    ComputationProgress* progress() const { return progress_; }
    // At start: when a crashed session left an autosave in `directory`, asks (ask, or a
    // message box) to Restore it, Discard it or decide Later. True when a restore started.
    bool offerRestore(const QString& directory, const RestoreAsker& ask = {});
    // Charts (Gantt + memory) as PNG, SVG or PDF by extension; Chrome trace (*.json) and
    // PyTorch CSV (*.csv) from the core writers. Errors go to the banner. A CSV of a schedule
    // that recomputes asks first (a modal question): export without the Rs, or cancel.
    bool exportTo(const QString& path);
    // The File menu: save, revert and the question before unsaved work is dropped.
    FileMenu* fileMenu() const { return files_; }
    // Errors: the red banner above the charts and the status bar. The banner stays while it is
    // true: until the next change computes, a file opens, or another action succeeds (a
    // compare, an export, a save, a live run started), whatever it was about.
    void showError(const QString& message);
    void clearError();
    // The yellow notice above the charts (hand edits set aside), empty when none is shown.
    QString noticeText() const;

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    // Starts mario-executor on the current schedule in a live-run window (Tools → Run on …).
    void runLive(const QString& what, const QStringList& extraArgs);
    void buildMenus();
    void showComputed();
    void showSnapshot(const PassStepSnapshot* snapshot);
    void showNotice(const QString& message);
    void buildNotice();
    void finishOpen(const QString& path, bool ok, const QString& error);

    ScheduleDocument document_;
    views::GanttView* gantt_;
    views::GanttOverview* overview_;
    views::MemoryChart* memory_;
    ConfigPanel* config_;
    PassPanel* passes_;
    SummaryPanel* summary_;
    PassStepper* stepper_;
    QAction* shadeBubbles_ = nullptr;
    QAction* boundChain_ = nullptr;  // enabled while the schedule has a recompute bound (hide)
    CompareWindow* compare_ = nullptr;
    TunerPanel* tuner_ = nullptr;
    WhatIfPanel* whatIf_ = nullptr;
    QLabel* banner_;
    QLabel* headline_ = nullptr;  // the summary's one-line headline above the charts
    QWidget* charts_;
    FileMenu* files_ = nullptr;
    QAction* editMode_ = nullptr;
    QAction* runOnGpu_ = nullptr;
    ExecutorProbe* executorProbe_ = nullptr;
    QWidget* notice_ = nullptr;
    QLabel* noticeText_ = nullptr;
    ComputationProgress* progress_ = nullptr;
};

}  // namespace mario::gui
