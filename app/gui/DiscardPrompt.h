#pragma once
// The question asked before unsaved work would be dropped (quit, close, open another file,
// revert): Save it, Discard it, or Cancel and keep working. Tests answer through a
// DiscardAsker instead of the modal box.
#include <QString>
#include <functional>

class QWidget;

namespace mario::gui {

enum class DiscardChoice { Save, Discard, Cancel };
// `document`: the file name or "the restored session"; `action`: what would drop it ("quit").
using DiscardAsker = std::function<DiscardChoice(const QString& document, const QString& action)>;

// Without `offerSave` (revert: saving first would make the revert a no-op) the box offers only
// Discard and Cancel.
DiscardChoice askToDiscard(QWidget* parent, const QString& document, const QString& action, bool offerSave = true);

}  // namespace mario::gui
