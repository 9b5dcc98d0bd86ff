#include "app/gui/PassStepper.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>

#include "app/gui/SummaryText.h"
#include "core/session/PassTrace.h"
#include "core/sim/BubbleBreakdown.h"

namespace mario::gui {

namespace {

// "Peak memory 4.00 KB → 1.03 KB." and what it is judged against: checkpointing trades time
// for memory, so a caption that gave the time alone hid why the step was worth taking.
QString memoryChange(const MemoryFit& before, const MemoryFit& after) {
    QString text = QObject::tr(" Peak memory %1 → %2")
                       .arg(bytesText(before.highest_peak_bytes), bytesText(after.highest_peak_bytes));
    if (!after.budget_bytes) return text + QStringLiteral(".");
    if (after.fits() && !before.fits()) return text + QObject::tr(", now within %1.").arg(budgetText(after));
    if (!after.fits())
        return text + QObject::tr(", %1 device(s) over %2.").arg(after.devices_over).arg(budgetText(after));
    return text + QObject::tr(", within %1.").arg(budgetText(after));
}

}  // namespace

std::vector<PassStepSnapshot> passStepSnapshots(const ScheduleInput& state) {
    std::vector<PassStepSnapshot> steps;
    MemoryFit previous;
    for (PassTraceStep& step : passTrace(state)) {
        const bool unit = (state.config && state.config->unit_costs) || state.source.info.unit_costs;
        const QString units = unit ? QObject::tr("time units") : QObject::tr("ms");
        const MemoryFit fit = memoryFit(step.result, step.plan.info);
        QString caption;
        if (steps.empty()) {
            QString memory = QObject::tr("peak memory %1").arg(bytesText(fit.highest_peak_bytes));
            if (fit.budget_bytes)
                memory += fit.fits() ? QObject::tr(", within %1").arg(budgetText(fit))
                                     : QObject::tr(", %1 device(s) over %2").arg(fit.devices_over).arg(budgetText(fit));
            caption = QObject::tr("The schedule before any pass: step %1 %2, %3. Press ▶ to apply the passes one at a "
                                  "time.")
                          .arg(step.result.makespan_ms, 0, 'g', 5)
                          .arg(units, memory);
        } else {
            caption = QString::fromStdString(step.caption) + memoryChange(previous, fit);
        }
        previous = fit;
        std::vector<views::BoxRef> highlights;
        for (const auto& [device, index] : step.touched) highlights.push_back({device, index});
        steps.push_back({std::move(step.plan), std::move(step.result), std::move(caption), std::move(highlights)});
    }
    return steps;
}

SharedShown shownForStep(const PassStepSnapshot& step, const ShownSchedule& document) {
    auto shown = std::make_shared<ShownSchedule>();
    shown->input = document.input;
    shown->fingerprint = document.fingerprint;
    ComputedSchedule& s = shown->schedule;
    s.plan = step.plan;
    s.result = step.result;
    s.base = document.schedule.base;
    s.ok = true;
    shown->timeline = std::make_shared<const views::Timeline>(views::buildTimeline(s.plan, s.result));
    shown->fit = memoryFit(s.result, s.plan.info);
    shown->memory = std::make_shared<const views::MemoryChartData>(views::prepareMemoryChart(s.result, shown->fit));
    if (auto bubbles = bubbleBreakdown(s.plan, s.result)) shown->bubbles = std::move(*bubbles);
    return shown;
}

PassStepper::PassStepper(QWidget* parent) : QGroupBox(tr("Pass stepper"), parent) {
    auto* layout = new QVBoxLayout(this);
    auto* buttons = new QHBoxLayout;
    previous_ = new QPushButton(tr("◀"), this);
    next_ = new QPushButton(tr("▶"), this);
    stop_ = new QPushButton(tr("done"), this);
    previous_->setObjectName("stepPrevious");
    next_->setObjectName("stepNext");
    stop_->setObjectName("stepDone");
    previous_->setToolTip(tr("Previous pass step"));
    next_->setToolTip(tr("Next pass step"));
    stop_->setToolTip(tr("Back to the full schedule"));
    position_ = new QLabel(this);
    // The side panel has a fixed width (MainWindow): the row must fit in it whatever it says.
    // Push buttons ask for 80 px each in most styles, and "step 12 of 14" beside three of them
    // widened the panel past its scroll area by 35 px, cutting off every control's right edge.
    // The arrows need only their glyph, and the position label takes what is left (eliding).
    for (QPushButton* button : {previous_, next_}) button->setMaximumWidth(button->fontMetrics().height() * 3);
    for (QPushButton* button : {previous_, next_, stop_})
        button->setMinimumWidth(button->fontMetrics().horizontalAdvance(button->text()) +
                                button->fontMetrics().height() * 2);
    position_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    position_->setObjectName("stepPosition");
    buttons->addWidget(previous_);
    buttons->addWidget(next_);
    buttons->addWidget(position_, 1);
    buttons->addWidget(stop_);
    caption_ = new QLabel(tr("Step through the passes to see what each one changes."), this);
    caption_->setWordWrap(true);
    caption_->setObjectName("stepCaption");
    caption_->setMinimumHeight(caption_->fontMetrics().lineSpacing() * 5);
    caption_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    // Wrapped to the panel's width, never widening it (a caption may name many instructions).
    QSizePolicy wrapped(QSizePolicy::Ignored, QSizePolicy::Preferred);
    wrapped.setHeightForWidth(true);
    caption_->setSizePolicy(wrapped);
    layout->addLayout(buttons);
    layout->addWidget(caption_);
    connect(previous_, &QPushButton::clicked, this, &PassStepper::previous);
    connect(next_, &QPushButton::clicked, this, &PassStepper::next);
    connect(stop_, &QPushButton::clicked, this, &PassStepper::stop);
    go(-1);
}

void PassStepper::setState(std::shared_ptr<const ScheduleInput> state) {
    state_ = std::move(state);
    stale_ = true;  // computed on the first step: most users never open the stepper
    if (current_ >= 0) stop();
}

const PassStepSnapshot* PassStepper::snapshot() const {
    return current_ >= 0 && current_ < stepCount() ? &steps_[current_] : nullptr;
}

QString PassStepper::caption() const { return caption_->text(); }

void PassStepper::next() {
    if (stale_) {
        steps_ = state_ ? passStepSnapshots(*state_) : std::vector<PassStepSnapshot>{};
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
    // When the summary makes the side panel scroll, the panel gives each widget its minimum
    // height: the caption asks for the lines it wraps to at its width (the memory sentence made
    // some six lines), never fewer than five, so it is never cut off.
    const int width = caption_->width() > 0 ? caption_->width() : contentsRect().width();
    caption_->setMinimumHeight(
        std::max(caption_->fontMetrics().lineSpacing() * 5, width > 0 ? caption_->heightForWidth(width) : 0));
    emit showSnapshot(snapshot());
}

}  // namespace mario::gui
