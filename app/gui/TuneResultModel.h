#pragma once
// A tuner run as a table: one row per feasible candidate in rank order, then (on request)
// one per rejected candidate with the reason in the status column. Sorting is left to a
// TuneResultSortProxy, which reads SortRole and keeps feasible rows first.
#include <QAbstractTableModel>
#include <vector>

#include "core/tune/TuneTypes.h"

namespace mario::gui {

class TuneResultModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Rank,
        SchemeCol,
        PP,
        DP,
        TP,
        Mbs,
        Checkpointing,
        SamplesPerS,
        TokensPerS,
        StepMs,
        Mfu,
        PeakGB,
        Bubble,
        Status,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole,  // a number (or the text) to sort the column by
        OutcomeRole,              // index into TuneResult::outcomes
        FeasibleRole,
    };

    explicit TuneResultModel(QObject* parent = nullptr);

    void setResult(const TuneResult& result);
    void clear();
    // Rejected candidates are hidden by default: a large space rejects most of its
    // candidates, and the reasons matter only when one asks why something is missing.
    void setShowRejected(bool show);
    bool showRejected() const { return showRejected_; }

    // The outcome behind a row of this model (not of a proxy), or -1.
    int outcomeAt(int row) const;
    // The row of an outcome, or -1 when it is not shown.
    int rowOf(int outcome) const;
    const TuneOutcome* outcome(int index) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void rebuildRows();
    QVariant display(const TuneOutcome& o, int rank, int column) const;
    QVariant sortKey(const TuneOutcome& o, int rank, int outcome, int column) const;

    std::vector<TuneOutcome> outcomes_;
    std::vector<int> rank_;  // per outcome: 1-based rank, 0 when not ranked
    std::vector<int> rows_;  // outcome per row
    std::vector<int> ranking_;
    bool showRejected_ = false;
};

}  // namespace mario::gui
