#include "app/gui/DeviceComparisonTable.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QStyle>

#include "core/sim/MemoryFit.h"
#include "core/util/HumanBytes.h"

namespace mario::gui {
namespace {

const QColor kOverLimit(0xD5, 0x5E, 0x00);  // the memory chart's over-limit vermilion

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}

const DeviceStats* statsOf(const SimResult& result, std::size_t device) {
    return device < result.devices.size() ? &result.devices[device] : nullptr;
}

// Marked over the plan's limit, or over one card when it has none (core/sim/MemoryFit.h).
QTableWidgetItem* peakCell(const DeviceStats* stats, const MemoryFit& fit) {
    if (!stats) return cell(QStringLiteral("—"));
    QTableWidgetItem* item = cell(QString::fromStdString(humanBytes(stats->peak_bytes)));
    if (fit.isOver(*stats)) {
        item->setForeground(kOverLimit);
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
        item->setToolTip(
            QObject::tr("over %1").arg(QString::fromStdString(budgetPhrase(fit.basis, humanBytes(*fit.budget_bytes)))));
    }
    return item;
}

QTableWidgetItem* idleCell(const DeviceStats* stats, views::TimeBase base) {
    return cell(stats ? views::formatDuration(stats->idle_ms, base) : QStringLiteral("—"));
}

}  // namespace

DeviceComparisonTable::DeviceComparisonTable(QWidget* parent) : QTableWidget(parent) {
    setObjectName("deviceComparison");
    setColumnCount(ColumnCount);
    setHorizontalHeaderLabels({tr("device"), tr("differ"), tr("peak A"), tr("peak B"), tr("idle A"), tr("idle B")});
    horizontalHeaderItem(Differ)->setToolTip(tr("compute instructions moved, retimed or only in one schedule"));
    horizontalHeaderItem(IdleA)->setToolTip(tr("time in the step the device computes nothing"));
    horizontalHeaderItem(IdleB)->setToolTip(horizontalHeaderItem(IdleA)->toolTip());
    verticalHeader()->setVisible(false);
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAlternatingRowColors(true);
}

void DeviceComparisonTable::setComparison(const Plan& a, const SimResult& resultA, const Plan& b,
                                          const SimResult& resultB, const ScheduleDifference& difference,
                                          views::TimeBase base) {
    const std::size_t devices = difference.devices.size();
    const MemoryFit fitA = memoryFit(resultA, a.info), fitB = memoryFit(resultB, b.info);
    setRowCount(static_cast<int>(devices));
    for (std::size_t d = 0; d < devices; ++d) {
        const int row = static_cast<int>(d);
        const DeviceStats* sa = statsOf(resultA, d);
        const DeviceStats* sb = statsOf(resultB, d);
        setItem(row, Device, cell(QString::number(d), Qt::AlignCenter));
        const int differ = difference.devices[d].total();
        QTableWidgetItem* differItem = cell(QString::number(differ));
        if (differ > 0) {
            QFont bold = differItem->font();
            bold.setBold(true);
            differItem->setFont(bold);
        }
        setItem(row, Differ, differItem);
        setItem(row, PeakA, peakCell(sa, fitA));
        setItem(row, PeakB, peakCell(sb, fitB));
        setItem(row, IdleA, idleCell(sa, base));
        setItem(row, IdleB, idleCell(sb, base));
    }
    resizeRowsToContents();
    resizeColumnsToContents();  // now, not at the first paint: naturalWidth() reads them
}

int DeviceComparisonTable::naturalWidth() const {
    // The columns, the frame, and room for the vertical scroll bar a long table gets.
    return horizontalHeader()->length() + 2 * frameWidth() + style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4;
}

}  // namespace mario::gui
