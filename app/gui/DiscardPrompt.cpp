#include "app/gui/DiscardPrompt.h"

#include <QMessageBox>
#include <QPushButton>

namespace mario::gui {

DiscardChoice askToDiscard(QWidget* parent, const QString& document, const QString& action, bool offerSave) {
    const QString question =
        offerSave ? QObject::tr("%1 has changes that are not saved: settings, passes or hand edits. Save them "
                                "before you %2?")
                        .arg(document, action)
                  : QObject::tr("%1 has changes that are not saved: settings, passes or hand edits. Discard them "
                                "and %2?")
                        .arg(document, action);
    QMessageBox box(QMessageBox::Warning, QObject::tr("Unsaved changes"), question, QMessageBox::NoButton, parent);
    box.setObjectName("discardPrompt");
    QPushButton* save = offerSave ? box.addButton(QObject::tr("&Save"), QMessageBox::AcceptRole) : nullptr;
    QPushButton* discard = box.addButton(QObject::tr("&Discard"), QMessageBox::DestructiveRole);
    QPushButton* cancel = box.addButton(QObject::tr("&Cancel"), QMessageBox::RejectRole);
    if (save) save->setObjectName("save");
    discard->setObjectName("discard");
    cancel->setObjectName("cancel");
    box.setDefaultButton(save ? save : cancel);
    box.setEscapeButton(cancel);  // Escape keeps the work
    box.exec();
    if (save && box.clickedButton() == save) return DiscardChoice::Save;
    if (box.clickedButton() == discard) return DiscardChoice::Discard;
    return DiscardChoice::Cancel;
}

}  // namespace mario::gui
