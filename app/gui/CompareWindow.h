#pragma once
// Two schedules one above the other on one time axis (base vs Mario, before vs after, or any
// two files), with the differences that matter spelled out above them (issue 14, item 6):
// each Gantt has its memory over time under it, every compute instruction that moved, started
// at another time or exists in only one schedule is outlined in both charts, a line counts them
// per device, and a table beside the charts puts each device's peak and idle time side by side.
#include <QWidget>

#include "app/gui/ScheduleDifference.h"
#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/TimeBase.h"

class QCheckBox;
class QLabel;
class QSplitter;

namespace mario::views {
class GanttView;
class MemoryChart;
}  // namespace mario::views

namespace mario::gui {

class DeviceComparisonTable;

struct NamedSchedule {
    QString name;
    Plan plan;
    SimResult result;  // memory curves optional: the window simulates them when missing
};

class CompareWindow : public QWidget {
    Q_OBJECT
public:
    explicit CompareWindow(QWidget* parent = nullptr);
    // Both in `base`'s time (unit-cost plans have time units, not milliseconds).
    void setSchedules(const NamedSchedule& top, const NamedSchedule& bottom,
                      views::TimeBase base = views::TimeBase::Milliseconds);

    views::GanttView* top() const { return top_; }
    views::GanttView* bottom() const { return bottom_; }
    views::MemoryChart* topMemory() const { return topMemory_; }
    views::MemoryChart* bottomMemory() const { return bottomMemory_; }
    DeviceComparisonTable* deviceTable() const { return table_; }
    const ScheduleDifference& difference() const { return difference_; }
    QString differenceText() const;
    QString differencesPerDeviceText() const;
    // Whether the differing instructions are outlined now. On by default while no device has
    // more than kOutlinedPerDeviceByDefault of them: a 1000-px chart then has 25 px per outline.
    // Beyond that (GPT-3 13B Chimera with all passes against its base: 133 to 179 per device)
    // the outlines cover the whole chart at full view; the user ticks the box and zooms in.
    QCheckBox* outlineBox() const { return outline_; }
    static constexpr int kOutlinedPerDeviceByDefault = 40;

private:
    void applyOutlines();

    views::GanttView *top_, *bottom_;
    QCheckBox* outline_;
    views::MemoryChart *topMemory_, *bottomMemory_;
    DeviceComparisonTable* table_;
    QSplitter* split_;
    QLabel *topName_, *bottomName_, *summary_, *perDevice_;
    ScheduleDifference difference_;
};

// "step 22 units vs 21 units (+4.8%), bubbles 31.8% vs 42.9%, highest peak 1.03 KB vs 4.00 KB"
QString describeDifference(const NamedSchedule& a, const NamedSchedule& b,
                           views::TimeBase base = views::TimeBase::Milliseconds);

}  // namespace mario::gui
