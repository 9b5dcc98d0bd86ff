#include "app/gui/SetStateCommand.h"

#include "app/gui/ScheduleDocument.h"

namespace mario::gui {

SetStateCommand::SetStateCommand(ScheduleDocument* document, SharedInput before, quint64 beforeKey, SharedInput after,
                                 quint64 afterKey, const QString& text)
    : QUndoCommand(text), document_(document), before_(std::move(before)), after_(std::move(after)),
      beforeKey_(beforeKey), afterKey_(afterKey) {}

void SetStateCommand::undo() { document_->applyState(before_, beforeKey_, QObject::tr("Undo %1").arg(text())); }
void SetStateCommand::redo() { document_->applyState(after_, afterKey_, QObject::tr("Redo %1").arg(text())); }

}  // namespace mario::gui
