#pragma once
// Live profiling window: the simulated Gantt on top, the measured one (from mario-executor's
// event stream) below on one time axis, then a heat map of every compute instruction's
// measured ÷ simulated time; beside them each iteration's step and each device's deviation.
// A run has N iterations (a spin box, 5 by default): the first is a warm-up, shown as such
// and left out of the medians (LiveMeasurements.h says why). Run again repeats the last run
// with the iterations set now; Stop ends it.
#include <QString>
#include <QStringList>
#include <QWidget>

#include "app/gui/LiveMeasurements.h"
#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/Timeline.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QTimer;

namespace mario::views {
class GanttView;
}

namespace mario::gui {

class InstructionHeatMap;
class LiveRun;
class LiveRunTables;

class LiveRunWindow : public QWidget {
    Q_OBJECT
public:
    static constexpr int kDefaultIterations = 5;

    explicit LiveRunWindow(QWidget* parent = nullptr);

    // The schedule being run and its simulation (what the measured run is compared with).
    void setPlan(const Plan& plan, const SimResult& simulated);
    // Starts the executor on planPath (which must hold the same plan as setPlan's) for the
    // iterations the spin box says, unless extraArgs name --iterations themselves.
    bool start(const QString& planPath, const QString& executablePath,
               const QString& modelSpec = QStringLiteral("tiny"), const QStringList& extraArgs = {});

    LiveRun* run() const { return run_; }
    views::GanttView* simulatedView() const { return simulated_; }
    views::GanttView* measuredView() const { return measured_; }
    InstructionHeatMap* heatMap() const { return heatMap_; }
    LiveRunTables* tables() const { return tables_; }
    QSpinBox* iterationsBox() const { return iterationsBox_; }
    QPushButton* runAgainButton() const { return runAgain_; }
    const LiveMeasurements& measurements() const { return measurements_; }
    QString deviationText() const;
    QString statusText() const;
    // The iteration the measured Gantt shows: the latest with a measurement (-1 before any).
    int shownIteration() const { return measurements_.latestIteration(); }
    int measuredCount() const { return measurements_.measuredCount(shownIteration()); }
    // The step compared with the simulation: the median after the warm-up (the warm-up's own
    // step while it is the only one finished).
    double stepMs() const { return measurements_.medianStepMs(); }

    // The measured compute boxes of the shown iteration, relative to its earliest start (ms).
    views::Timeline measuredTimeline() const;

public slots:
    void stop();
    // Runs the last started run again, with the spin box's iterations.
    bool runAgain();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void refresh();
    void scheduleRefresh();
    void setRunning(bool running);
    QString deviationSentence() const;

    Plan plan_;
    SimResult sim_;
    LiveMeasurements measurements_;
    std::vector<std::vector<bool>> checkpointed_;
    bool running_ = false;
    QString error_;
    QString lastPlanPath_, lastExecutable_, lastModel_;
    QStringList lastExtraArgs_;

    LiveRun* run_;
    views::GanttView *simulated_, *measured_;
    InstructionHeatMap* heatMap_;
    LiveRunTables* tables_;
    QLabel *deviation_, *status_, *measuredTitle_;
    QSpinBox* iterationsBox_;
    QPushButton *runAgain_, *stopButton_;
    QTimer* throttle_;
};

}  // namespace mario::gui
