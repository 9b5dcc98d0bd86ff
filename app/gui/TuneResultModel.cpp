#include "app/gui/TuneResultModel.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QLocale>

namespace mario::gui {

namespace {

QString schemeText(const TuneCandidate& c) {
    const std::string_view name = schemeName(c.scheme);
    QString text = QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
    if (schemeInfo(c.scheme).chunked) text += QStringLiteral(" (v=%1)").arg(c.chunks);
    return text;
}

QString number(double value, int decimals) { return QLocale().toString(value, 'f', decimals); }

// Rejected candidates that were never simulated have no timing; an empty cell reads better
// than a zero that looks like a result.
bool simulated(const TuneOutcome& o) { return o.feasible || (!o.pruned && o.step_ms > 0); }

}  // namespace

TuneResultModel::TuneResultModel(QObject* parent) : QAbstractTableModel(parent) {}

void TuneResultModel::setResult(const TuneResult& result) {
    beginResetModel();
    outcomes_ = result.outcomes;
    ranking_ = result.ranking;
    rank_.assign(outcomes_.size(), 0);
    for (int r = 0; r < static_cast<int>(ranking_.size()); ++r)
        if (ranking_[r] >= 0 && ranking_[r] < static_cast<int>(outcomes_.size())) rank_[ranking_[r]] = r + 1;
    rebuildRows();
    endResetModel();
}

void TuneResultModel::clear() { setResult(TuneResult{}); }

void TuneResultModel::setShowRejected(bool show) {
    if (show == showRejected_) return;
    beginResetModel();
    showRejected_ = show;
    rebuildRows();
    endResetModel();
}

void TuneResultModel::rebuildRows() {
    rows_.clear();
    for (int i : ranking_)
        if (i >= 0 && i < static_cast<int>(outcomes_.size())) rows_.push_back(i);
    if (!showRejected_) return;
    for (int i = 0; i < static_cast<int>(outcomes_.size()); ++i)
        if (!outcomes_[i].feasible && !outcomes_[i].rejection.empty()) rows_.push_back(i);
}

int TuneResultModel::outcomeAt(int row) const {
    return row >= 0 && row < static_cast<int>(rows_.size()) ? rows_[row] : -1;
}

int TuneResultModel::rowOf(int outcome) const {
    for (int r = 0; r < static_cast<int>(rows_.size()); ++r)
        if (rows_[r] == outcome) return r;
    return -1;
}

const TuneOutcome* TuneResultModel::outcome(int index) const {
    return index >= 0 && index < static_cast<int>(outcomes_.size()) ? &outcomes_[index] : nullptr;
}

int TuneResultModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TuneResultModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TuneResultModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    static const char* const names[ColumnCount] = {QT_TR_NOOP("rank"),
                                                   QT_TR_NOOP("scheme"),
                                                   QT_TR_NOOP("PP"),
                                                   QT_TR_NOOP("DP"),
                                                   QT_TR_NOOP("TP"),
                                                   QT_TR_NOOP("mbs"),
                                                   QT_TR_NOOP("checkpointing"),
                                                   QT_TR_NOOP("samples/s"),
                                                   QT_TR_NOOP("tokens/s"),
                                                   QT_TR_NOOP("step ms"),
                                                   QT_TR_NOOP("MFU %"),
                                                   QT_TR_NOOP("peak GB"),
                                                   QT_TR_NOOP("bubble %"),
                                                   QT_TR_NOOP("status")};
    if (role == Qt::DisplayRole && section >= 0 && section < ColumnCount) return tr(names[section]);
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case Mbs: return tr("micro-batch size");
            case PeakGB: return tr("peak memory of the fullest device");
            case Bubble: return tr("share of the step the devices sit idle");
            case SamplesPerS: return tr("global batch / step");
            case Mfu: return tr("model FLOPs utilisation: model FLOPs / (step × GPUs × peak)");
            default: return {};
        }
    }
    return {};
}

QVariant TuneResultModel::display(const TuneOutcome& o, int rank, int column) const {
    const TuneCandidate& c = o.candidate;
    const bool timed = simulated(o);
    switch (column) {
        case Rank: return rank > 0 ? QVariant(rank) : QVariant();
        case SchemeCol: return schemeText(c);
        case PP: return c.pp;
        case DP: return c.dp;
        case TP: return c.tp;
        case Mbs: return c.micro_batch_size;
        case Checkpointing: return c.checkpoint ? tr("Mario") : tr("off");
        case SamplesPerS: return timed ? number(o.samples_per_s, 2) : QString();
        case TokensPerS: return timed ? number(o.tokens_per_s, 0) : QString();
        case StepMs: return timed ? number(o.step_ms, 1) : QString();
        case Mfu: return timed && o.mfu > 0 ? number(100 * o.mfu, 1) : QString();
        case PeakGB: return o.peak_bytes > 0 ? number(o.peak_bytes / 1e9, 1) : QString();
        case Bubble: return timed ? number(100 * o.bubble_ratio, 1) : QString();
        case Status:
            if (o.feasible) return rank == 1 ? tr("best") : tr("fits");
            return QString::fromStdString(o.rejection);
        default: return {};
    }
}

QVariant TuneResultModel::sortKey(const TuneOutcome& o, int rank, int outcome, int column) const {
    const TuneCandidate& c = o.candidate;
    switch (column) {
        // Rejected rows keep search-space order after the ranked ones.
        case Rank: return rank > 0 ? rank : 1'000'000 + outcome;
        case SchemeCol: return schemeText(c);
        case PP: return c.pp;
        case DP: return c.dp;
        case TP: return c.tp;
        case Mbs: return c.micro_batch_size;
        case Checkpointing: return c.checkpoint ? 1 : 0;
        case SamplesPerS: return o.samples_per_s;
        case TokensPerS: return o.tokens_per_s;
        case StepMs: return o.step_ms;
        case Mfu: return o.mfu;
        case PeakGB: return o.peak_bytes;
        case Bubble: return o.bubble_ratio;
        case Status: return display(o, rank, column);
        default: return {};
    }
}

QVariant TuneResultModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const int i = rows_[index.row()];
    const TuneOutcome& o = outcomes_[i];
    const int rank = rank_[i];
    switch (role) {
        case Qt::DisplayRole: return display(o, rank, index.column());
        case SortRole: return sortKey(o, rank, i, index.column());
        case OutcomeRole: return i;
        case FeasibleRole: return o.feasible;
        case Qt::ToolTipRole:
            return QString::fromStdString(o.candidate.label()) +
                   (o.feasible ? QString() : QStringLiteral("\n") + QString::fromStdString(o.rejection));
        case Qt::TextAlignmentRole:
            if (index.column() == SchemeCol || index.column() == Checkpointing || index.column() == Status)
                return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::ForegroundRole:
            if (!o.feasible) return QBrush(QColor(0x8A, 0x8A, 0x8A));
            if (index.column() == Checkpointing && o.candidate.checkpoint) return QBrush(QColor(0x00, 0x5A, 0x8C));
            return {};
        case Qt::FontRole:
            if (rank == 1) {
                QFont bold;
                bold.setBold(true);
                return bold;
            }
            return {};
        default: return {};
    }
}

}  // namespace mario::gui
