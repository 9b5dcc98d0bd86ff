#pragma once
// Live profiling window: the simulated Gantt on top, the measured one (from mario-executor's
// event stream) below on one time axis, the deviation between them, and a Stop button.
#include <QString>
#include <QStringList>
#include <QWidget>
#include <optional>
#include <utility>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/Timeline.h"

class QLabel;
class QPushButton;
class QTimer;

namespace mario::views {
class GanttView;
}

namespace mario::gui {

class LiveRun;

class LiveRunWindow : public QWidget {
    Q_OBJECT
public:
    explicit LiveRunWindow(QWidget* parent = nullptr);

    // The schedule being run and its simulation (what the measured run is compared with).
    void setPlan(const Plan& plan, const SimResult& simulated);
    // Starts the executor on planPath (which must hold the same plan as setPlan's).
    bool start(const QString& planPath, const QString& executablePath,
               const QString& modelSpec = QStringLiteral("tiny"), const QStringList& extraArgs = {});

    LiveRun* run() const { return run_; }
    views::GanttView* simulatedView() const { return simulated_; }
    views::GanttView* measuredView() const { return measured_; }
    QString deviationText() const;
    QString statusText() const;
    int measuredCount() const { return measuredCount_; }  // compute instructions of iteration 0
    double stepMs() const { return stepMs_; }             // the first iteration's measured step

    // The measured boxes of iteration 0, relative to its earliest start (ms).
    views::Timeline measuredTimeline() const;

public slots:
    void stop();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void onInstruction(int device, int index, double startMs, double endMs, int iteration);
    void refresh();
    void scheduleRefresh();

    Plan plan_;
    SimResult sim_;
    std::vector<std::vector<bool>> checkpointed_;
    std::vector<std::vector<std::optional<std::pair<double, double>>>> measuredTimes_;  // [device][index]
    int measuredCount_ = 0;
    int iterations_ = 0;
    double stepMs_ = 0;
    double lastStepMs_ = 0;
    double lastLoss_ = 0;
    bool running_ = false;
    QString error_;

    LiveRun* run_;
    views::GanttView *simulated_, *measured_;
    QLabel *deviation_, *status_;
    QPushButton* stopButton_;
    QTimer* throttle_;
};

}  // namespace mario::gui
