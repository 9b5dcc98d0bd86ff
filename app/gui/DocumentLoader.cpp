#include "app/gui/DocumentLoader.h"

#include <QFileInfo>
#include <exception>
#include <new>

#include "app/gui/AutosaveFile.h"
#include "core/io/PresetLibrary.h"
#include "core/io/TextFile.h"
#include "core/session/ScheduleFiles.h"

namespace mario::gui {
namespace {

LoadedDocument load(const QString& path, const PresetLibrary& presets, const std::atomic<bool>* cancel) {
    LoadedDocument out;
    if (AutosaveFile::isAutosavePath(path)) {
        // Through core's bounded reader, as every other file: an autosave named on the command
        // line could be a device or a pipe.
        auto text = readTextFile(path.toStdString());
        if (!text) {
            out.error = QString::fromStdString(text.error().message);
            return out;
        }
        auto session = AutosaveFile::parse(QByteArray::fromStdString(*text), path, presets, &out.error);
        if (!session) return out;
        out.state = std::move(session->state);
        out.path = session->originalPath;
        out.restored = true;
        out.ok = true;
        return out;
    }
    OpenedSchedule opened = openSchedule(path.toStdString(), presets, cancel);
    if (!opened.ok()) {
        out.error = QString::fromStdString(opened.error);
        out.deadlocked = opened.problem == OpenProblem::Deadlock;
        return out;
    }
    out.state = std::move(opened.input);
    // Absolute, so that a restored session names the same file from any working directory.
    out.path = QFileInfo(path).absoluteFilePath();
    out.ok = true;
    return out;
}

}  // namespace

LoadedDocument loadDocument(const QString& path, const PresetLibrary& presets, const std::atomic<bool>* cancel) {
    // Core reports errors as values; this is the window's last line of defence at the file
    // boundary, so that no input, however hostile, ends the session.
    try {
        return load(path, presets, cancel);
    } catch (const std::bad_alloc&) {
        LoadedDocument out;
        out.error = path + QStringLiteral(": too large to load (out of memory)");
        return out;
    } catch (const std::exception& e) {
        LoadedDocument out;
        out.error = path + QStringLiteral(": cannot be read (%1)").arg(QString::fromLocal8Bit(e.what()));
        return out;
    }
}

}  // namespace mario::gui
