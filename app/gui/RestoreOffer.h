#pragma once
// The question asked at start when a crashed session left its autosave behind: Restore it,
// Discard it, or decide Later (it stays for the next start). Asked whatever file the
// workbench was asked to open, so a crash's work is never silently dropped or overwritten.
#include <QString>
#include <functional>

class QWidget;

namespace mario::gui {

enum class RestoreChoice { Restore, Discard, Later };
using RestoreAsker = std::function<RestoreChoice(const QString& autosavePath)>;

// A modal message box naming the session's file and when it was last saved.
RestoreChoice askToRestore(QWidget* parent, const QString& autosavePath);
// "llama2.config.json, saved 2024-05-01 10:22" (the file the crashed session had open).
QString describeAutosave(const QString& autosavePath);

}  // namespace mario::gui
