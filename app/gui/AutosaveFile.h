#pragma once
// The autosave file format, and its only reader and writer: one JSON document holding the
// whole DocumentState (config if any, the source plan, the pass choices, the hand edits) and
// the path of the file the session came from, so a restore brings back everything the user
// had, not only the plan they were looking at.
//
//   {"format": "mario-autosave", "version": 1, "original_path": "/home/me/cfg.config.json",
//    "config": {…config…}, "source": {…plan…}, "passes": ["checkpoint", …],
//    "edits": [{"device": 1, "moved": "1F3", "before": "1B0"}, {"device": 0, "moved": "0F2", "before": null}]}
//
// The config and the plan are written by core's writers and read back by its readers.
#include <QByteArray>
#include <QString>
#include <functional>
#include <optional>

#include "DocumentState.h"

namespace mario {
class PresetLibrary;
}

namespace mario::gui {

struct AutosavedSession {
    DocumentState state;
    QString originalPath;  // empty for a session that never had a file
};

class AutosaveFile {
public:
    static constexpr const char* kFormat = "mario-autosave";
    static constexpr int kVersion = 1;
    // Autosave files end in this, so opening one (restore) is told apart from opening a plan.
    static constexpr const char* kSuffix = ".mario-autosave.json";

    static bool isAutosavePath(const QString& path);
    static QByteArray serialize(const DocumentState& state, const QString& originalPath);
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
