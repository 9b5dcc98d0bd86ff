#include "app/gui/RestoreOffer.h"

#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <nlohmann/json.hpp>

#include "core/io/TextFile.h"

namespace mario::gui {

QString describeAutosave(const QString& autosavePath) {
    QString original;
    // Bounded like every read: the autosave folder is the user's and may hold anything.
    if (const auto bytes = readTextFile(autosavePath.toStdString())) {
        const auto root = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
        if (root.is_object() && root.contains("original_path") && root["original_path"].is_string())
            original = QString::fromStdString(root["original_path"].get<std::string>());
    }
    const QString saved = QLocale().toString(QFileInfo(autosavePath).lastModified(), QLocale::ShortFormat);
    return QObject::tr("%1, saved %2").arg(original.isEmpty() ? QObject::tr("an unsaved schedule") : original, saved);
}

RestoreChoice askToRestore(QWidget* parent, const QString& autosavePath) {
    QMessageBox box(QMessageBox::Question, QObject::tr("Restore the last session?"),
                    QObject::tr("The workbench did not close normally last time. Its session (%1) was autosaved: "
                                "settings, passes and hand edits.")
                        .arg(describeAutosave(autosavePath)),
                    QMessageBox::NoButton, parent);
    box.setObjectName("restoreOffer");
    QPushButton* restore = box.addButton(QObject::tr("&Restore"), QMessageBox::AcceptRole);
    QPushButton* discard = box.addButton(QObject::tr("&Discard"), QMessageBox::DestructiveRole);
    QPushButton* later = box.addButton(QObject::tr("&Later"), QMessageBox::RejectRole);
    restore->setObjectName("restore");
    discard->setObjectName("discard");
    later->setObjectName("later");
    box.setDefaultButton(restore);
    box.setEscapeButton(later);
    box.exec();
    if (box.clickedButton() == restore) return RestoreChoice::Restore;
    if (box.clickedButton() == discard) return RestoreChoice::Discard;
    return RestoreChoice::Later;
}

}  // namespace mario::gui
