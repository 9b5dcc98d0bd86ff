#pragma once
// The numbers that answer "is this schedule good?": step time and its change against the
// base schedule, distance to the lower bounds, hidden recomputation, throughput, and per
// device its peak memory and where its idle time sits.
#include <QGroupBox>

#include "app/gui/ScheduleComputation.h"
#include "views/TimeBase.h"

class QLabel;
namespace mario {
struct MemoryFit;
}
class QTableWidget;

namespace mario::gui {

class SummaryPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit SummaryPanel(QWidget* parent = nullptr);
    void showSchedule(const ComputedSchedule& schedule, views::TimeBase base = views::TimeBase::Milliseconds);
    QString stepTimeText() const;
    // The rich text under the step time, ending with the memory verdict (for tests).
    QString detailsText() const;
    // One line of rich text with the numbers that matter most (step, vs base, gap to the
    // bound, hidden recompute, peak against the limit), for the strip above the charts.
    QString headline() const { return headline_; }

private:
    void showDevices(const ComputedSchedule& schedule, const MemoryFit& fit, views::TimeBase base);

    QLabel* stepTime_;
    QLabel* details_;
    QTableWidget* devices_;
    QString headline_;
};

}  // namespace mario::gui
