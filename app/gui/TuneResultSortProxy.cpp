#include "app/gui/TuneResultSortProxy.h"

#include "app/gui/TuneResultModel.h"

namespace mario::gui {

TuneResultSortProxy::TuneResultSortProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(TuneResultModel::SortRole);
    setDynamicSortFilter(true);
}

int TuneResultSortProxy::outcomeAt(int proxyRow) const {
    const QModelIndex index = this->index(proxyRow, 0);
    return index.isValid() ? index.data(TuneResultModel::OutcomeRole).toInt() : -1;
}

bool TuneResultSortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const bool leftFeasible = left.data(TuneResultModel::FeasibleRole).toBool();
    const bool rightFeasible = right.data(TuneResultModel::FeasibleRole).toBool();
    if (leftFeasible != rightFeasible) {
        // A descending sort places `left` first when lessThan(right, left); answering by the
        // sort order keeps feasible rows on top either way.
        return (sortOrder() == Qt::AscendingOrder) == leftFeasible;
    }
    const QVariant a = left.data(sortRole()), b = right.data(sortRole());
    if (a != b) return QVariant::compare(a, b) == QPartialOrdering::Less;
    // Ties (same PP, same scheme…) list in rank order in both directions, so the order
    // within a group never looks random.
    const bool leftRanksHigher = left.sibling(left.row(), TuneResultModel::Rank).data(sortRole()).toInt() <
                                 right.sibling(right.row(), TuneResultModel::Rank).data(sortRole()).toInt();
    return (sortOrder() == Qt::AscendingOrder) == leftRanksHigher;
}

}  // namespace mario::gui
