#pragma once
// The numbers that answer "is this schedule good?": step time and its change against the
// base schedule, distance to the lower bound, bubbles, throughput and memory per device.
#include <QGroupBox>

#include "app/gui/ScheduleComputation.h"

class QLabel;
class QTableWidget;

namespace mario::gui {

class SummaryPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit SummaryPanel(QWidget* parent = nullptr);
    void showSchedule(const ComputedSchedule& schedule);
    QString stepTimeText() const;

private:
    QLabel* stepTime_;
    QLabel* details_;
    QTableWidget* devices_;
};

}  // namespace mario::gui
