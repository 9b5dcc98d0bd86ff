#pragma once
// The workbench window: settings, passes and summary on the left; the Gantt timeline and
// the memory charts (sharing its time axis) in the middle; file, export and edit menus.
#include <QMainWindow>

#include "ScheduleDocument.h"

class QLabel;

namespace mario::views {
class GanttView;
class MemoryChart;
}  // namespace mario::views

namespace mario::gui {

class ConfigPanel;
class PassPanel;
class PassStepper;
class CompareWindow;
struct PassStepSnapshot;
class SummaryPanel;
class TunerPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    ScheduleDocument* document() { return &document_; }
    views::GanttView* gantt() const { return gantt_; }
    views::MemoryChart* memoryChart() const { return memory_; }
    PassPanel* passPanel() const { return passes_; }
    SummaryPanel* summary() const { return summary_; }
    PassStepper* stepper() const { return stepper_; }
    // Opens (or refreshes) the compare window: the current schedule against the base one
    // (no passes, no edits), or against another config or plan file.
    CompareWindow* compareWithBase();
    CompareWindow* compareWithFile(const QString& path);
    ConfigPanel* configPanel() const { return config_; }
    TunerPanel* tuner();  // the schedule tuner window (Tools → Tune…), created on first use
    QString errorText() const;  // the error banner, empty when none

    // Opens a file; on failure the banner says why and the current session stays.
    bool openFile(const QString& path);
    // Charts (Gantt + memory) as PNG, SVG or PDF by extension; Chrome trace (*.json) and
    // PyTorch CSV (*.csv) from the core writers. Errors go to the banner.
    bool exportTo(const QString& path);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    // Starts mario-executor on the current schedule in a live-run window (Tools → Run on …).
    void runLive(const QString& what, const QStringList& extraArgs);
    void buildMenus();
    void showComputed();
    void showSnapshot(const PassStepSnapshot* snapshot);
    void showError(const QString& message);
    void rememberRecent(const QString& path);
    void rebuildRecentMenu();

    ScheduleDocument document_;
    views::GanttView* gantt_;
    views::MemoryChart* memory_;
    ConfigPanel* config_;
    PassPanel* passes_;
    SummaryPanel* summary_;
    PassStepper* stepper_;
    QAction* shadeBubbles_ = nullptr;
    CompareWindow* compare_ = nullptr;
    TunerPanel* tuner_ = nullptr;
    QLabel* banner_;
    QWidget* charts_;
    QMenu* recentMenu_ = nullptr;
};

}  // namespace mario::gui
