#pragma once
// Teaching: walk through the passes one step at a time. Each step shows the plan as that
// pass left it, outlines what it moved or inserted (or, for removals, the forward that now
// keeps its activations), shades the bubbles, and says in one sentence what happened.
#include <QGroupBox>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/ShownSchedule.h"
#include "core/session/ScheduleInput.h"
#include "core/sim/SimResult.h"
#include "views/Timeline.h"

class QLabel;
class QPushButton;

namespace mario::gui {

struct PassStepSnapshot {
    Plan plan;
    SimResult result;  // with memory curves
    QString caption;
    std::vector<views::BoxRef> highlights;
};

// Step 0 is the source plan; step k the plan after the k-th pass step that changed it. Each
// caption ends with the step's peak memory against the one before: the reason to checkpoint.
std::vector<PassStepSnapshot> passStepSnapshots(const ScheduleInput& state);

// The window's schedule as this step left it, so that the summary, the headline and the memory
// chart say what the chart shows: the step's plan and simulation against the document's base,
// its own peaks. No recompute bound: that was taken of the final plan, not of this step.
SharedShown shownForStep(const PassStepSnapshot& step, const ShownSchedule& document);

class PassStepper : public QGroupBox {
    Q_OBJECT
public:
    explicit PassStepper(QWidget* parent = nullptr);

    // Recomputes the steps for a new document state (shared with the document: no copy) and
    // returns to "not stepping".
    void setState(std::shared_ptr<const ScheduleInput> state);
    int stepCount() const { return static_cast<int>(steps_.size()); }
    int currentStep() const { return current_; }  // -1: not stepping
    const PassStepSnapshot* snapshot() const;
    QString caption() const;

public slots:
    void next();
    void previous();
    void stop();

signals:
    // The window shows this snapshot (nullptr: back to the document's own schedule).
    void showSnapshot(const mario::gui::PassStepSnapshot* snapshot);

private:
    void go(int step);

    std::shared_ptr<const ScheduleInput> state_;
    bool stale_ = true;
    std::vector<PassStepSnapshot> steps_;
    int current_ = -1;
    QLabel* position_;
    QLabel* caption_;
    QPushButton *previous_, *next_, *stop_;
};

}  // namespace mario::gui
