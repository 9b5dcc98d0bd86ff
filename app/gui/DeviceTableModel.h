#pragma once
// The summary's table, one row per device: its peak memory (red when over the budget) and
// where its idle time sits (fill, waits, drain) with the share of its recomputation hidden.
// Rows are written when the view asks for them, so 65 536 devices cost nothing until
// scrolled to: a QTableWidget made 400 000 items for them, 0.26 s on the GUI thread.
#include <QAbstractTableModel>

#include "app/gui/ShownSchedule.h"
#include "views/TimeBase.h"

namespace mario::gui {

class DeviceTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit DeviceTableModel(QObject* parent = nullptr);
    void setSchedule(SharedShown shown, views::TimeBase base);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString details(int row) const;  // every column's numbers in one sentence (the tooltip)

    SharedShown shown_;
    views::TimeBase base_ = views::TimeBase::Milliseconds;
};

}  // namespace mario::gui
