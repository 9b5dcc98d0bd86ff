#pragma once
// Sorts a TuneResultModel by any column while keeping every feasible candidate above every
// rejected one, in both directions: sorting by peak memory should not bury the answers
// under rejected candidates that have none.
#include <QSortFilterProxyModel>

namespace mario::gui {

class TuneResultSortProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TuneResultSortProxy(QObject* parent = nullptr);

    // The outcome behind a row of this proxy, or -1.
    int outcomeAt(int proxyRow) const;

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

}  // namespace mario::gui
