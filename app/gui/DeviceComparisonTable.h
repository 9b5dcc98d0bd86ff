#pragma once
// The compare window's per-device table: for each device how many instructions differ, its
// peak memory in A and B (over the limit, or one card without one, in vermilion) and its
// idle time in A and B — what decides the step and whether it fits, side by side.
#include <QTableWidget>

#include "app/gui/ScheduleDifference.h"
#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/TimeBase.h"

namespace mario::gui {

class DeviceComparisonTable : public QTableWidget {
    Q_OBJECT
public:
    enum Column { Device, Differ, PeakA, PeakB, IdleA, IdleB, ColumnCount };

    explicit DeviceComparisonTable(QWidget* parent = nullptr);

    // One row per device of either schedule; a device one schedule lacks shows "—" there.
    void setComparison(const Plan& a, const SimResult& resultA, const Plan& b, const SimResult& resultB,
                       const ScheduleDifference& difference, views::TimeBase base);
    // The width that shows every column without a horizontal scroll bar.
    int naturalWidth() const;
};

}  // namespace mario::gui
