#pragma once
// One undoable step: the document state before and after. Toggles, settings changes and
// drags are all this command, so undo can never leave the document half-changed.
#include <QUndoCommand>

#include "core/session/ScheduleInput.h"

namespace mario::gui {

class ScheduleDocument;

class SetStateCommand : public QUndoCommand {
public:
    SetStateCommand(ScheduleDocument* document, ScheduleInput before, ScheduleInput after, const QString& text);
    void undo() override;
    void redo() override;

private:
    ScheduleDocument* document_;
    ScheduleInput before_, after_;
};

}  // namespace mario::gui
