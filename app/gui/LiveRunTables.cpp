#include "app/gui/LiveRunTables.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "app/gui/LiveMeasurements.h"
#include "core/session/Fidelity.h"

namespace mario::gui {
namespace {

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}

QString ms(double value) { return QStringLiteral("%1 ms").arg(value, 0, 'g', 4); }

QString percent(double fraction) { return QString::asprintf("%+.1f%%", 100 * fraction); }

QTableWidget* table(const QStringList& headers, QWidget* parent) {
    auto* t = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->setVisible(false);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setAlternatingRowColors(true);
    return t;
}

}  // namespace

LiveRunTables::LiveRunTables(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    iterations_ = table({tr("iteration"), tr("step"), tr("simulated vs step"), tr("loss")}, this);
    iterations_->setObjectName("liveIterations");
    iterations_->horizontalHeaderItem(StepDeviation)
        ->setToolTip(tr("(simulated − measured) ÷ measured: + means the simulation predicted more time"));
    devices_ = table({tr("device"), tr("simulated"), tr("measured"), tr("deviation")}, this);
    devices_->setObjectName("liveDevices");
    devices_->horizontalHeaderItem(Measured)->setToolTip(
        tr("the device's measured compute instructions, each its median over the iterations after the "
           "warm-up"));
    devices_->horizontalHeaderItem(Deviation)->setToolTip(iterations_->horizontalHeaderItem(StepDeviation)->toolTip());
    layout->addWidget(new QLabel(tr("<b>Iterations</b>"), this));
    layout->addWidget(iterations_, 2);
    layout->addWidget(new QLabel(tr("<b>Compute time per device</b>"), this));
    layout->addWidget(devices_, 3);
}

void LiveRunTables::refresh(const LiveMeasurements& measurements) {
    const double simulated = measurements.simulatedMakespan();
    const auto& its = measurements.iterations();
    iterations_->setRowCount(static_cast<int>(its.size()));
    for (int row = 0; row < static_cast<int>(its.size()); ++row) {
        const auto& it = its[static_cast<std::size_t>(row)];
        // Counted from 1 for people; the executor's events count from 0.
        QTableWidgetItem* name =
            cell(it.warmup() ? tr("%1 (warm-up)").arg(row + 1) : QString::number(row + 1), Qt::AlignCenter);
        if (it.warmup()) {
            name->setForeground(QColor(0x80, 0x80, 0x80));
            name->setToolTip(tr("left out of the medians: allocators, threads and caches are still cold"));
        }
        iterations_->setItem(row, Iteration, name);
        iterations_->setItem(row, Step, cell(it.finished ? ms(it.step_ms) : tr("running…")));
        iterations_->setItem(row, StepDeviation,
                             cell(it.finished ? percent(simulationError(simulated, it.step_ms)) : QString()));
        iterations_->setItem(row, Loss,
                             cell(!it.finished             ? QString()
                                  : std::isfinite(it.loss) ? QString::number(it.loss, 'g', 5)
                                                           : tr("diverged")));
    }
    const auto perDevice = measurements.perDevice();
    devices_->setRowCount(static_cast<int>(perDevice.size()));
    for (int row = 0; row < static_cast<int>(perDevice.size()); ++row) {
        const auto& d = perDevice[static_cast<std::size_t>(row)];
        const bool any = d.instructions > 0;
        devices_->setItem(row, Device, cell(QString::number(row), Qt::AlignCenter));
        devices_->setItem(row, Simulated, cell(any ? ms(d.simulated_ms) : QStringLiteral("—")));
        devices_->setItem(row, Measured, cell(any ? ms(d.measured_ms) : QStringLiteral("—")));
        devices_->setItem(row, Deviation,
                          cell(any ? percent(simulationError(d.simulated_ms, d.measured_ms)) : QStringLiteral("—")));
    }
}

}  // namespace mario::gui
