#pragma once
// From a DocumentState to what the window shows: passes, then hand edits, then the
// simulation (with memory curves) and the base schedule's simulation for comparison. Pure
// and thread-safe, so the document can run it off the GUI thread.
#include <QString>
#include <QStringList>
#include <vector>

#include "DocumentState.h"
#include "passes/PassReport.h"
#include "sim/SimResult.h"

namespace mario::gui {

struct ComputedSchedule {
    quint64 generation = 0;
    bool ok = false;
    QString error;          // when !ok: what went wrong, in one sentence
    Plan plan;              // after passes and edits
    SimResult result;       // with memory curves
    SimResult base;         // the source plan without passes or edits
    std::vector<PassReport> steps;
    QStringList skippedEdits;  // edits that no longer apply to the new pass output
    double compute_ms = 0;
};

ComputedSchedule computeSchedule(const DocumentState& state, quint64 generation);

// Identifies a state by content (source plan, passes, edits), so that results can be cached
// across toggles and undo: a pass toggled off and on again shows at once.
quint64 stateKey(const DocumentState& state);

// Index in `program` of the instruction an edit refers to, or -1.
int indexOf(const std::vector<Instruction>& program, const Instruction& instruction);

}  // namespace mario::gui
