#pragma once
// One undoable step: the document state before and after, with their fingerprints (the
// document's cache keys, 15 ms each to recompute at a million instructions). Toggles, settings
// changes and drags are all this command, so undo can never leave the document half-changed.
// The states are shared with the document and its cache, never copied.
#include <QUndoCommand>

#include "app/gui/ShownSchedule.h"

namespace mario::gui {

class ScheduleDocument;

class SetStateCommand : public QUndoCommand {
public:
    SetStateCommand(ScheduleDocument* document, SharedInput before, quint64 beforeKey, SharedInput after,
                    quint64 afterKey, const QString& text);
    void undo() override;
    void redo() override;

private:
    ScheduleDocument* document_;
    SharedInput before_, after_;
    quint64 beforeKey_, afterKey_;
};

}  // namespace mario::gui
