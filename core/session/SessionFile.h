#pragma once
// The session file format, and its only reader and writer: one JSON document holding a whole
// ScheduleInput (config if any, the source plan, the pass choices, the hand edits) and the path
// of the file the session came from, so a restore brings back everything the user had, not
// only the plan they were looking at. The window autosaves in it (app/gui/AutosaveFile adds the
// atomic write and the file naming).
//
//   {"format": "mario-autosave", "version": 1, "original_path": "/home/me/cfg.config.json",
//    "config": {…config…}, "source": {…plan…}, "passes": ["checkpoint", …],
//    "edits": [{"device": 1, "moved": "1F3", "before": "1B0"}, {"device": 0, "moved": "0F2", "before": null}]}
//
// The config and the plan are written by core's writers and read back by its readers.
#include <string>

#include "core/io/PresetLibrary.h"
#include "core/session/ScheduleInput.h"
#include "core/util/Result.h"

namespace mario {

struct SessionFile {
    static constexpr const char* kFormat = "mario-autosave";
    static constexpr int kVersion = 1;

    ScheduleInput input;
    std::string original_path;  // empty for a session that never had a file
};

std::string writeSessionFile(const ScheduleInput& input, const std::string& originalPath);
// Errors name the JSON path: "edits[2].moved: …"; the source plan is validated, so a damaged
// file never reaches the simulator.
Result<SessionFile> readSessionFile(const std::string& text, const PresetLibrary& presets);

}  // namespace mario
