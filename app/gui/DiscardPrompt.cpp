#include "app/gui/DiscardPrompt.h"

#include <QMessageBox>
#include <QPushButton>

namespace mario::gui {

DiscardChoice askToDiscard(QWidget* parent, const QString& document, const QString& action) {
    QMessageBox box(QMessageBox::Warning, QObject::tr("Unsaved changes"),
                    QObject::tr("%1 has changes that are not saved: settings, passes or hand edits. Save them "
                                "before you %2?")
                        .arg(document, action),
                    QMessageBox::NoButton, parent);
    box.setObjectName("discardPrompt");
    QPushButton* save = box.addButton(QObject::tr("&Save"), QMessageBox::AcceptRole);
    QPushButton* discard = box.addButton(QObject::tr("&Discard"), QMessageBox::DestructiveRole);
    QPushButton* cancel = box.addButton(QObject::tr("&Cancel"), QMessageBox::RejectRole);
    save->setObjectName("save");
    discard->setObjectName("discard");
    cancel->setObjectName("cancel");
    box.setDefaultButton(save);
    box.setEscapeButton(cancel);  // Escape keeps the work
    box.exec();
    if (box.clickedButton() == save) return DiscardChoice::Save;
    if (box.clickedButton() == discard) return DiscardChoice::Discard;
    return DiscardChoice::Cancel;
}

}  // namespace mario::gui
