#include "app/gui/SummaryPanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/sim/MemoryFit.h"
#include "core/util/HumanBytes.h"

namespace mario::gui {
namespace {

QString bytesText(double bytes) { return QString::fromStdString(humanBytes(bytes)); }

QString percent(double ratio) { return QStringLiteral("%1%").arg(100 * ratio, 0, 'f', 1); }

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
    devices_ = new QTableWidget(0, 3, this);
    devices_->setHorizontalHeaderLabels({tr("device"), tr("peak memory"), tr("idle")});
    devices_->verticalHeader()->hide();
    devices_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    devices_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(stepTime_);
    layout->addWidget(details_);
    layout->addWidget(devices_, 1);
}

QString SummaryPanel::stepTimeText() const { return stepTime_->text(); }

void SummaryPanel::showSchedule(const ComputedSchedule& s) {
    const SimResult& r = s.result;
    stepTime_->setText(tr("step %1 ms").arg(r.makespan_ms, 0, 'g', 6));
    const double change = s.base.makespan_ms > 0 ? r.makespan_ms / s.base.makespan_ms - 1 : 0;
    const double gap = r.lower_bound_ms > 0 ? r.makespan_ms / r.lower_bound_ms - 1 : 0;
    const MemoryFit fit = memoryFit(r, s.plan.info.memory_limit_bytes);
    const double basePeak = memoryFit(s.base, std::nullopt).highest_peak_bytes;
    QString text;
    text += tr("vs base schedule: <b>%1%2</b> (base %3 ms)<br>")
                .arg(change >= 0 ? "+" : "")
                .arg(percent(change))
                .arg(s.base.makespan_ms, 0, 'g', 6);
    text += tr("lower bound %1 ms, %2 above it<br>").arg(r.lower_bound_ms, 0, 'g', 6).arg(percent(gap));
    // The pipeline bound adds the fill and drain each device must wait for; it is what a
    // reordering of the programs could still reach.
    const double tightGap = r.tight_lower_bound_ms > 0 ? r.makespan_ms / r.tight_lower_bound_ms - 1 : 0;
    if (r.tight_lower_bound_ms > r.lower_bound_ms + 1e-9)
        text +=
            tr("pipeline bound %1 ms, %2 above it<br>").arg(r.tight_lower_bound_ms, 0, 'g', 6).arg(percent(tightGap));
    if (r.recompute_ms > 0)
        text += tr("recompute %1 ms, %2 hidden in bubbles<br>")
                    .arg(r.recompute_ms, 0, 'g', 4)
                    .arg(percent(r.recomputeHiddenShare()));
    text += tr("bubbles %1<br>").arg(percent(r.bubble_ratio));
    if (r.tokens_per_s > 0)
        text += tr("throughput %1 samples/s, %2 tokens/s<br>")
                    .arg(r.samples_per_s, 0, 'g', 4)
                    .arg(r.tokens_per_s, 0, 'g', 4);
    else text += tr("throughput %1 samples/s<br>").arg(r.samples_per_s, 0, 'g', 4);
    text += tr("highest peak memory %1 (base %2)").arg(bytesText(fit.highest_peak_bytes), bytesText(basePeak));
    if (fit.limit_bytes)
        text += fit.fits() ? tr("<br>fits the %1 limit").arg(bytesText(*fit.limit_bytes))
                           : tr("<br><span style='color:#b00020'><b>%1 device(s) over the %2 limit</b></span>")
                                 .arg(fit.devices_over_limit)
                                 .arg(bytesText(*fit.limit_bytes));
    details_->setText(text);
    devices_->setRowCount(static_cast<int>(r.devices.size()));
    for (int row = 0; row < static_cast<int>(r.devices.size()); ++row) {
        const auto& d = r.devices[row];
        devices_->setItem(row, 0, new QTableWidgetItem(QString::number(d.index)));
        auto* memory = new QTableWidgetItem(bytesText(d.peak_bytes));
        if (fit.isOver(d)) memory->setForeground(QColor("#b00020"));
        devices_->setItem(row, 1, memory);
        devices_->setItem(row, 2, new QTableWidgetItem(r.makespan_ms > 0 ? percent(d.idle_ms / r.makespan_ms) : "–"));
    }
}

}  // namespace mario::gui
