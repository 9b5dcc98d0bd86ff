#pragma once
// How the summary writes bytes, shares and the memory budget: one wording for the panel's
// text and its device table.
#include <QObject>
#include <QString>

#include "core/sim/MemoryFit.h"
#include "core/util/HumanBytes.h"

namespace mario::gui {

inline QString bytesText(double bytes) { return QString::fromStdString(humanBytes(bytes)); }

inline QString percent(double ratio) { return QStringLiteral("%1%").arg(100 * ratio, 0, 'f', 1); }

// What the peaks are judged against, in the words of `mario simulate`'s memory line: the
// limit, else one card's memory (no limit set), else nothing.
inline QString budgetText(const MemoryFit& fit) {
    return QString::fromStdString(budgetPhrase(fit.basis, humanBytes(fit.budget_bytes.value_or(0))));
}

}  // namespace mario::gui
