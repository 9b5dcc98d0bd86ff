#include "app/gui/DeviceTableModel.h"

#include <QColor>
#include <QStringList>

#include "app/gui/SummaryText.h"

namespace mario::gui {
namespace {

// Layers stands beside the device: which layers it holds is read at a glance, the idle shares after.
enum Column { Device, Layers, Peak, Fill, Waits, Drain, RecomputeHidden, Columns };

// The transformer layers of a device's stages, in stage order: "13–16 (4)", or
// "0–1 (2), 14–15 (2)" for a device with two stages; empty where the plan does not say
// (a plan file without layers, teaching mode).
QString layersOf(const Plan& plan, int device) {
    QStringList parts;
    for (const StageSpec& stage : plan.stages) {
        if (stage.device != device || !stage.layers) continue;
        const auto [begin, end] = *stage.layers;
        parts << (end > begin ? QStringLiteral("%1–%2 (%3)").arg(begin).arg(end - 1).arg(end - begin)
                              : QStringLiteral("none (0)"));
    }
    return parts.join(QStringLiteral(", "));
}

}  // namespace

DeviceTableModel::DeviceTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void DeviceTableModel::setSchedule(SharedShown shown, views::TimeBase base) {
    beginResetModel();
    shown_ = std::move(shown);
    base_ = base;
    endResetModel();
}

int DeviceTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !shown_ ? 0 : static_cast<int>(shown_->schedule.result.devices.size());
}

int DeviceTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Columns; }

QVariant DeviceTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
            case Device: return tr("device");
            case Peak: return tr("peak");
            case Fill: return tr("fill");
            case Waits: return tr("waits");
            case Drain: return tr("drain");
            case RecomputeHidden: return tr("R hidden");
            case Layers: return tr("layers");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case Fill: return tr("idle before the device's first instruction (pipeline fill)");
            case Waits: return tr("idle between its first and last instruction (waiting on neighbours)");
            case Drain: return tr("idle after its last instruction (pipeline drain)");
            case RecomputeHidden: return tr("share of its recomputation that ran where it would have waited");
            case Layers:
                return tr("the transformer layers of each of its stages, first–last (count); "
                          "parallel.layer_split chooses them");
        }
    }
    return {};
}

QVariant DeviceTableModel::data(const QModelIndex& index, int role) const {
    if (!shown_ || !index.isValid() || index.row() >= rowCount()) return {};
    const SimResult& r = shown_->schedule.result;
    const DeviceStats& d = r.devices[static_cast<std::size_t>(index.row())];
    if (index.column() == Device) return role == Qt::DisplayRole ? QVariant(QString::number(d.index)) : QVariant();
    if (index.column() == Peak) {
        const bool over = shown_->fit.isOver(d);
        if (role == Qt::DisplayRole) return bytesText(d.peak_bytes);
        if (role == Qt::ForegroundRole && over) return QColor("#b00020");
        if (role == Qt::ToolTipRole && over) return tr("over %1").arg(budgetText(shown_->fit));
        return {};
    }
    if (index.column() == Layers) {
        const QString layers = layersOf(shown_->schedule.plan, d.index);
        return role == Qt::DisplayRole ? QVariant(layers.isEmpty() ? QStringLiteral("–") : layers) : QVariant();
    }
    // Idle time needs the breakdown, which a deadlocked schedule lacks: those cells stay empty.
    if (index.row() >= static_cast<int>(shown_->bubbles.size())) return {};
    if (role == Qt::ToolTipRole) return details(index.row());
    if (role != Qt::DisplayRole) return {};
    const DeviceBubbles& b = shown_->bubbles[static_cast<std::size_t>(index.row())];
    auto share = [&r](double ms) { return r.makespan_ms > 0 ? percent(ms / r.makespan_ms) : QStringLiteral("–"); };
    switch (index.column()) {
        case Fill: return share(b.idle_before_ms);
        case Waits: return share(b.idle_interior_ms);
        case Drain: return share(b.idle_after_ms);
        default: return b.recompute_ms > 0 ? percent(b.recompute_hidden_ms / b.recompute_ms) : QStringLiteral("–");
    }
}

QString DeviceTableModel::details(int row) const {
    const DeviceBubbles& b = shown_->bubbles[static_cast<std::size_t>(row)];
    auto time = [this](double ms) { return views::formatDuration(ms, base_, 4); };
    return tr("device %1: compute %2, recompute %3 (%4 hidden), idle %5 before its first instruction, %6 waiting in "
              "between, %7 after its last")
        .arg(shown_->schedule.result.devices[static_cast<std::size_t>(row)].index)
        .arg(time(b.compute_ms), time(b.recompute_ms), time(b.recompute_hidden_ms), time(b.idle_before_ms),
             time(b.idle_interior_ms), time(b.idle_after_ms));
}

}  // namespace mario::gui
