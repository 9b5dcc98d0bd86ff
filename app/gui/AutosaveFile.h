#pragma once
// Autosave files on disk: core's session file format (session/SessionFile.h owns it) written
// atomically, under a suffix that tells a restore apart from opening a plan.
#include <QByteArray>
#include <QString>
#include <functional>
#include <optional>

#include "core/session/ScheduleInput.h"

namespace mario {
class PresetLibrary;
}

namespace mario::gui {

struct AutosavedSession {
    ScheduleInput state;
    QString originalPath;  // empty for a session that never had a file
};

class AutosaveFile {
public:
    // Autosave files end in this, so opening one (restore) is told apart from opening a plan.
    static constexpr const char* kSuffix = ".mario-autosave.json";

    static bool isAutosavePath(const QString& path);
    static QByteArray serialize(const ScheduleInput& state, const QString& originalPath);
    // `path` only names the file in error messages: "<path>: edits[2].moved: …".
    static std::optional<AutosavedSession> parse(const QByteArray& bytes, const QString& path,
                                                 const PresetLibrary& presets, QString* error);

    // Writes `bytes` to `path` atomically: a temporary file beside it, flushed to disk, then
    // renamed over it (QSaveFile), so a crash or kill at any point leaves either the previous
    // file or the new one, never a partial one. `afterChunk` (tests) runs after each chunk.
    static bool writeAtomically(const QString& path, const QByteArray& bytes, QString* error,
                                const std::function<void(qint64 written)>& afterChunk = {});
};

}  // namespace mario::gui
