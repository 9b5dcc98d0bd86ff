#include "app/gui/SummaryPanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "app/gui/DeviceTableModel.h"
#include "app/gui/SummaryText.h"
#include "core/sim/RecomputeBound.h"

namespace mario::gui {
namespace {

QString overInRed(const QString& text) {
    return QStringLiteral("<span style='color:#b00020'><b>%1</b></span>").arg(text);
}

QString memoryVerdict(const MemoryFit& fit) {
    if (!fit.budget_bytes) return {};
    const bool card = fit.basis == MemoryFit::Basis::Card;
    const QString fits =
        fit.fits() ? QObject::tr("fits %1").arg(budgetText(fit))
                   : overInRed(QObject::tr("%1 device(s) over %2").arg(fit.devices_over).arg(budgetText(fit)));
    // Short: the side panel is narrow. `mario simulate` adds the advice to set a limit.
    return (card ? QObject::tr("<br>no limit set: %1") : QStringLiteral("<br>%1")).arg(fits);
}

// The headline's memory part: the peak against what it is judged by, or the devices over it.
QString headlinePeak(const MemoryFit& fit) {
    const QString peak = bytesText(fit.highest_peak_bytes);
    if (!fit.budget_bytes) return QObject::tr("peak %1").arg(peak);
    if (!fit.fits()) return overInRed(QObject::tr("%1 device(s) over %2").arg(fit.devices_over).arg(budgetText(fit)));
    return fit.basis == MemoryFit::Basis::Card ? QObject::tr("peak %1 of %2").arg(peak, budgetText(fit))
                                               : QObject::tr("peak %1 of %2").arg(peak, bytesText(*fit.budget_bytes));
}

// What "vs base" compares with, and whether the base could run at all.
struct BaseComparison {
    MemoryFit baseFit;            // the base's peaks against the same limit or card
    bool baseOver = false;        // the base does not fit: a slower step is what fitting costs
    bool baseFitsAnyway = false;  // it fits, yet the schedule recomputes: checkpointing is a choice
    bool fromPlanFile = false;    // the base is a plan file that already carries passes
    QString applied;              // those passes, comma-separated
};

BaseComparison compareWithBase(const ShownSchedule& shown) {
    const ComputedSchedule& s = shown.schedule;
    BaseComparison out;
    out.baseFit = memoryFit(s.base, s.plan.info);
    static const std::vector<std::string> none;
    const auto& applied = shown.input ? shown.input->source.info.passes_applied : none;
    out.fromPlanFile = !applied.empty();
    QStringList names;
    for (const std::string& name : applied) names << QString::fromStdString(name);
    out.applied = names.join(QStringLiteral(", "));
    // A plan file's base already recomputes: whether it fits says nothing about checkpointing.
    if (out.fromPlanFile || !out.baseFit.budget_bytes) return out;
    out.baseOver = !out.baseFit.fits();
    out.baseFitsAnyway = out.baseFit.fits() && s.result.recompute_ms > 0;
    return out;
}

}  // namespace

SummaryPanel::SummaryPanel(QWidget* parent) : QGroupBox(tr("Summary"), parent) {
    auto* layout = new QVBoxLayout(this);
    stepTime_ = new QLabel(this);
    stepTime_->setObjectName("stepTime");
    QFont big = stepTime_->font();
    big.setPointSizeF(big.pointSizeF() * 1.4);
    big.setBold(true);
    stepTime_->setFont(big);
    details_ = new QLabel(this);
    details_->setWordWrap(true);
    details_->setTextFormat(Qt::RichText);
    rows_ = new DeviceTableModel(this);
    devices_ = new QTableView(this);
    devices_->setObjectName("deviceTable");
    devices_->setModel(rows_);
    devices_->verticalHeader()->hide();
    devices_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    devices_->horizontalHeader()->setStretchLastSection(true);
    devices_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(stepTime_);
    layout->addWidget(details_);
    layout->addWidget(devices_, 1);
}

QString SummaryPanel::stepTimeText() const { return stepTime_->text(); }

QString SummaryPanel::detailsText() const { return details_->text(); }

void SummaryPanel::showSchedule(const SharedShown& shown, views::TimeBase base) {
    const ComputedSchedule& s = shown->schedule;
    const SimResult& r = s.result;
    // Times in the unit their size asks for ("6.03 s", never "3.296e+04 ms"), and in time
    // units for unit-cost plans, which have no milliseconds.
    auto time = [base](double ms) { return views::formatDuration(ms, base, 4); };
    stepTime_->setText(tr("step %1").arg(views::formatDuration(r.makespan_ms, base, 6)));
    const double change = s.base.makespan_ms > 0 ? r.makespan_ms / s.base.makespan_ms - 1 : 0;
    const double gap = r.lower_bound_ms > 0 ? r.makespan_ms / r.lower_bound_ms - 1 : 0;
    const MemoryFit& fit = shown->fit;
    const BaseComparison against = compareWithBase(*shown);
    const double basePeak = against.baseFit.highest_peak_bytes;
    QString text;
    if (against.fromPlanFile)
        text += tr("vs the file's plan (%1 already applied): <b>%2%3</b> (%4)<br>")
                    .arg(against.applied)
                    .arg(change >= 0 ? "+" : "")
                    .arg(percent(change))
                    .arg(time(s.base.makespan_ms));
    else
        text += tr("vs base schedule: <b>%1%2</b> (base %3)<br>")
                    .arg(change >= 0 ? "+" : "")
                    .arg(percent(change))
                    .arg(time(s.base.makespan_ms));
    if (against.baseOver)
        text += tr("&nbsp;&nbsp;the base does not fit: %1 &gt; %2, so the change is what fitting costs<br>")
                    .arg(bytesText(basePeak), budgetText(against.baseFit));
    else if (against.baseFitsAnyway)
        text += tr("&nbsp;&nbsp;the base already fits (%1 of %2): checkpointing is not needed for memory<br>")
                    .arg(bytesText(basePeak), budgetText(against.baseFit));
    text += tr("lower bound %1, %2 above it<br>").arg(time(r.lower_bound_ms)).arg(percent(gap));
    // The pipeline bound adds the fill and drain each device must wait for; it is what a
    // reordering of the programs could still reach.
    const double tightGap = r.tight_lower_bound_ms > 0 ? r.makespan_ms / r.tight_lower_bound_ms - 1 : 0;
    if (r.tight_lower_bound_ms > r.lower_bound_ms + 1e-9)
        text += tr("pipeline bound %1, %2 above it<br>").arg(time(r.tight_lower_bound_ms)).arg(percent(tightGap));
    // With hide: no placement of the Rs within hide's budget beats this (sim/RecomputeBound.h).
    // Under it, the devices whose Rs set that bound, in the order the chain of work runs.
    // Hide's bound holds every device's order fixed: a reordered step can run below it, which
    // says the order changed, not that the Rs sit optimally (the CLI's words too).
    const bool belowHide =
        s.hide_bound && s.reorder_bound && s.hide_bound->bound_ms > 0 && s.hide_bound->above(r) < -1e-4;
    if (belowHide)
        text += tr("best placement of Rs in hide's order ≥ %1, %2 below it: reorder changed the order<br>")
                    .arg(time(s.hide_bound->bound_ms))
                    .arg(percent(-s.hide_bound->above(r)));
    else if (s.hide_bound && s.hide_bound->reachedBy(r))
        text += tr("best placement of Rs ≥ %1: reached<br>").arg(time(s.hide_bound->bound_ms));
    else if (s.hide_bound && s.hide_bound->bound_ms > 0)
        text += tr("best placement of Rs ≥ %1, %2 above it<br>")
                    .arg(time(s.hide_bound->bound_ms))
                    .arg(percent(s.hide_bound->above(r)));
    if (s.hide_bound && s.hide_bound->bound_ms > 0)
        text += tr("&nbsp;&nbsp;set along %1<br>").arg(QString::fromStdString(chainPhrase(*s.hide_bound)));
    // With reorder: no order, checkpointing or placement within the budget beats this
    // (passes/ReorderBound.h).
    if (s.reorder_bound && s.reorder_bound->reachedBy(r.aloneMakespan()))
        text += tr("best order within the budget ≥ %1: reached<br>").arg(time(s.reorder_bound->bound_ms));
    else if (s.reorder_bound && s.reorder_bound->bound_ms > 0)
        text += tr("best order within the budget ≥ %1, %2 above it<br>")
                    .arg(time(s.reorder_bound->bound_ms))
                    .arg(percent(s.reorder_bound->above(r.aloneMakespan())));
    if (r.recompute_ms > 0)
        text += tr("recompute %1, %2 hidden in bubbles<br>")
                    .arg(time(r.recompute_ms))
                    .arg(percent(r.recomputeHiddenShare()));
    // Devices that share one GPU or CPU (sim/SharedHardware.h): what their contention cost.
    if (r.contention_rounds > 0)
        text += tr("devices share hardware: contention adds %1 of compute%2<br>")
                    .arg(time(r.contention_ms))
                    .arg(r.contention_settled ? QString() : tr(" (still settling when its budget ran out)"));
    text += tr("bubbles %1<br>").arg(percent(r.bubble_ratio));
    if (base == views::TimeBase::Units) text += tr("<i>unit costs: times are time units, not milliseconds</i><br>");
    else if (r.tokens_per_s > 0)
        text += tr("throughput %1 samples/s, %2 tokens/s<br>")
                    .arg(QLocale().toString(r.samples_per_s, 'f', r.samples_per_s < 100 ? 2 : 0))
                    .arg(QLocale().toString(r.tokens_per_s, 'f', 0));
    else text += tr("throughput %1 samples/s<br>").arg(QLocale().toString(r.samples_per_s, 'f', 2));
    // What the GPUs achieve, to sanity-check against known runs (sim/StepFlops.h).
    if (r.flops.mfu > 0)
        text += tr("%1 TFLOP/s per GPU: MFU %2, HFU %3<br>")
                    .arg(QLocale().toString(r.flops.model_tflops_per_gpu, 'f', 0))
                    .arg(percent(r.flops.mfu))
                    .arg(percent(r.flops.hfu));
    // Millions below a billion: the CPU examples' few million read "0.00 billion".
    if (const double parameters = s.plan.info.model_parameters; parameters >= 1e9)
        text += tr("%1 billion parameters on %2 GPUs<br>")
                    .arg(QLocale().toString(parameters / 1e9, 'f', 2))
                    .arg(QLocale().toString(r.flops.gpus, 'f', 0));
    else if (parameters > 0)
        text += tr("%1 million parameters on %2 GPUs<br>")
                    .arg(QLocale().toString(parameters / 1e6, 'f', parameters < 1e7 ? 2 : 1))
                    .arg(QLocale().toString(r.flops.gpus, 'f', 0));
    text += tr("highest peak memory %1 (base %2)").arg(bytesText(fit.highest_peak_bytes), bytesText(basePeak));
    text += memoryVerdict(fit);
    details_->setText(text);
    // The same numbers in one line for the strip above the charts: what a user judges a
    // schedule by, visible without scrolling the side panel.
    const double bound = std::max(r.lower_bound_ms, r.tight_lower_bound_ms);
    QStringList parts{tr("<b>step %1</b>").arg(views::formatDuration(r.makespan_ms, base, 4))};
    // Against a base that cannot run, a slower step is the price of fitting, not a regression.
    const QString vsBase = tr("%1%2 vs %3")
                               .arg(change >= 0 ? "+" : "")
                               .arg(percent(change))
                               .arg(against.fromPlanFile ? tr("the file's plan") : tr("base"));
    if (against.baseOver)
        parts << tr("base does not fit (%1 &gt; %2)")
                     .arg(bytesText(basePeak), bytesText(against.baseFit.budget_bytes.value_or(0)));
    else if (against.fromPlanFile && change == 0) parts << tr("%1 already applied in the file").arg(against.applied);
    else parts << vsBase;
    if (against.baseFitsAnyway)
        parts << tr("base already fits (%1 of %2)")
                     .arg(bytesText(basePeak), bytesText(against.baseFit.budget_bytes.value_or(0)));
    parts << tr("%1 above the bound").arg(percent(bound > 0 ? r.makespan_ms / bound - 1 : 0));
    if (r.flops.mfu > 0) parts << tr("MFU %1").arg(percent(r.flops.mfu));
    if (r.recompute_ms > 0) parts << tr("recompute %1 hidden").arg(percent(r.recomputeHiddenShare()));
    // Whether hide's placement can still improve, in the words of the summary's bound line.
    if (s.hide_bound && s.reorder_bound && s.hide_bound->bound_ms > 0 && s.hide_bound->above(r) < -1e-4)
        parts << tr("%1 below hide's order").arg(percent(-s.hide_bound->above(r)));
    else if (s.hide_bound && s.hide_bound->reachedBy(r)) parts << tr("Rs placed optimally");
    else if (s.hide_bound && s.hide_bound->bound_ms > 0)
        parts << tr("%1 above the best placement of Rs").arg(percent(s.hide_bound->above(r)));
    if (s.reorder_bound && s.reorder_bound->reachedBy(r.aloneMakespan())) parts << tr("order optimal");
    else if (s.reorder_bound && s.reorder_bound->bound_ms > 0)
        parts << tr("%1 above the best order").arg(percent(s.reorder_bound->above(r.aloneMakespan())));
    parts << headlinePeak(fit);
    headline_ = parts.join(QStringLiteral(" &nbsp;·&nbsp; "));
    rows_->setSchedule(shown, base);
}

}  // namespace mario::gui
