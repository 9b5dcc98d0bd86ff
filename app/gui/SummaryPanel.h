#pragma once
// The numbers that answer "is this schedule good?": step time and its change against the
// base schedule, distance to the lower bounds, hidden recomputation, throughput, and per
// device its peak memory and where its idle time sits.
#include <QGroupBox>

#include "app/gui/ShownSchedule.h"
#include "views/TimeBase.h"

class QLabel;
class QTableView;

namespace mario::gui {

class DeviceTableModel;

class SummaryPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit SummaryPanel(QWidget* parent = nullptr);
    // The numbers, and the device table (rows made as they are scrolled to).
    void showSchedule(const SharedShown& shown, views::TimeBase base = views::TimeBase::Milliseconds);
    QString stepTimeText() const;
    // The rich text under the step time, ending with the memory verdict (for tests).
    QString detailsText() const;
    // One line of rich text with the numbers that matter most (step, vs base, gap to the
    // bound, hidden recompute, peak against the limit), for the strip above the charts.
    QString headline() const { return headline_; }

private:
    QLabel* stepTime_;
    QLabel* details_;
    QTableView* devices_;
    DeviceTableModel* rows_;
    QString headline_;
};

}  // namespace mario::gui
