#pragma once
// Reading a file into a ScheduleInput: a config (generated into a plan), a plan, or a
// session autosave (restore). Pure and thread-safe, so the document runs it off the GUI
// thread; every failure, including any exception from below, ends as one error line.
#include <QString>
#include <atomic>

#include "core/session/ScheduleInput.h"

namespace mario {
class PresetLibrary;
}

namespace mario::gui {

struct LoadedDocument {
    bool ok = false;
    QString error;  // when !ok: one line naming the file and what is wrong
    ScheduleInput state;
    QString path;             // the document's path: the file itself, or an autosave's original
    bool restored = false;    // came from an autosave
    bool deadlocked = false;  // the file is well-formed but its plan deadlocks (exit code 3)
};

// `cancel` stops a config's layer-split search, which may take seconds (session/PlanBuilder.h);
// the job that sets it discards the result.
LoadedDocument loadDocument(const QString& path, const PresetLibrary& presets,
                            const std::atomic<bool>* cancel = nullptr);

}  // namespace mario::gui
