#include "app/gui/SetStateCommand.h"

#include "app/gui/ScheduleDocument.h"

namespace mario::gui {

SetStateCommand::SetStateCommand(ScheduleDocument* document, ScheduleInput before, ScheduleInput after,
                                 const QString& text)
    : QUndoCommand(text), document_(document), before_(std::move(before)), after_(std::move(after)) {}

void SetStateCommand::undo() { document_->applyState(before_); }
void SetStateCommand::redo() { document_->applyState(after_); }

}  // namespace mario::gui
