#include "PassStepper.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>

#include "ScheduleComputation.h"
#include "passes/PassManager.h"
#include "passes/StepCaption.h"
#include "sim/Simulator.h"

namespace mario::gui {
namespace {

std::vector<views::BoxRef> highlightsOf(const PassReport& step, const Plan& plan) {
    std::vector<views::BoxRef> boxes;
    for (const PassChange& change : step.changes) {
        const auto& program = plan.devices[change.device].program;
        // A removed R leaves nothing to outline: outline its forward, which now keeps everything.
        const Instruction shown = change.kind == ChangeKind::Removed
                                      ? Instruction{Op::Forward, change.instruction.stage, change.instruction.microbatch}
                                      : change.instruction;
        const int index = indexOf(program, shown);
        if (index >= 0) boxes.push_back({change.device, index});
    }
    return boxes;
}

}  // namespace

std::vector<PassStepSnapshot> passStepSnapshots(const DocumentState& state) {
    std::vector<PassStepSnapshot> steps;
    auto base = Simulator::run(state.source, {.record_memory_curve = true});
    if (!base) return steps;
    steps.push_back({state.source, *base,
                     QObject::tr("The schedule before any pass: step %1 ms. Press ▶ to apply the passes one at a time.")
                         .arg(base->makespan_ms, 0, 'g', 5),
                     {}});
    Plan plan = state.source;
    PassManagerOptions options;
    options.validate_each_pass = false;
    options.on_step = [&steps](const PassReport& step, const Plan& now) {
        auto sim = Simulator::run(now, {.record_memory_curve = true});
        if (!sim) return;
        const QString caption = QString::fromStdString(captionForStep(step, now, steps.back().result, *sim));
        steps.push_back({now, std::move(*sim), caption, highlightsOf(step, now)});
    };
    (void)runPasses(plan, state.passes, options);
    return steps;
}

PassStepper::PassStepper(QWidget* parent) : QGroupBox(tr("Pass stepper"), parent) {
    auto* layout = new QVBoxLayout(this);
    auto* buttons = new QHBoxLayout;
    previous_ = new QPushButton(tr("◀"), this);
    next_ = new QPushButton(tr("▶"), this);
    stop_ = new QPushButton(tr("done"), this);
    previous_->setToolTip(tr("Previous pass step"));
    next_->setToolTip(tr("Next pass step"));
    stop_->setToolTip(tr("Back to the full schedule"));
    position_ = new QLabel(this);
    buttons->addWidget(previous_);
    buttons->addWidget(next_);
    buttons->addWidget(position_, 1);
    buttons->addWidget(stop_);
    caption_ = new QLabel(tr("Step through the passes to see what each one changes."), this);
    caption_->setWordWrap(true);
    caption_->setObjectName("stepCaption");
    caption_->setMinimumHeight(caption_->fontMetrics().lineSpacing() * 5);
    caption_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    layout->addLayout(buttons);
    layout->addWidget(caption_);
    connect(previous_, &QPushButton::clicked, this, &PassStepper::previous);
    connect(next_, &QPushButton::clicked, this, &PassStepper::next);
    connect(stop_, &QPushButton::clicked, this, &PassStepper::stop);
    go(-1);
}

void PassStepper::setState(const DocumentState& state) {
    state_ = state;
    stale_ = true;  // computed on the first step: most users never open the stepper
    if (current_ >= 0) stop();
}

const PassStepSnapshot* PassStepper::snapshot() const {
    return current_ >= 0 && current_ < stepCount() ? &steps_[current_] : nullptr;
}

QString PassStepper::caption() const { return caption_->text(); }

void PassStepper::next() {
    if (stale_) {
        steps_ = passStepSnapshots(state_);
        stale_ = false;
    }
    go(std::min(current_ + 1, stepCount() - 1));
}

void PassStepper::previous() { go(std::max(current_ - 1, 0)); }

void PassStepper::stop() { go(-1); }

void PassStepper::go(int step) {
    current_ = step;
    previous_->setEnabled(current_ > 0);
    next_->setEnabled(current_ < 0 || current_ + 1 < stepCount());
    stop_->setEnabled(current_ >= 0);
    position_->setText(current_ >= 0 ? tr("step %1 of %2").arg(current_).arg(stepCount() - 1) : QString());
    if (const PassStepSnapshot* shown = snapshot()) caption_->setText(shown->caption);
    else caption_->setText(tr("Step through the passes to see what each one changes."));
    emit showSnapshot(snapshot());
}

}  // namespace mario::gui
