#pragma once
// Two schedules one above the other on one time axis (base vs Mario, before vs after, or any
// two files), with the differences that matter spelled out above them.
#include <QWidget>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/TimeBase.h"

class QLabel;

namespace mario::views {
class GanttView;
}

namespace mario::gui {

struct NamedSchedule {
    QString name;
    Plan plan;
    SimResult result;
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
    QString differenceText() const;

private:
    views::GanttView *top_, *bottom_;
    QLabel *topName_, *bottomName_, *difference_;
};

// "step 22 units vs 21 units (+4.8%), bubbles 31.8% vs 42.9%, highest peak 1.03 KB vs 4.00 KB"
QString describeDifference(const NamedSchedule& a, const NamedSchedule& b,
                           views::TimeBase base = views::TimeBase::Milliseconds);

}  // namespace mario::gui
