#pragma once
// Where every path a schedule takes begins and ends: reading a config (generated into a plan)
// or a plan file and checking that the plan can run, and saving the user's work. The CLI, the
// window's open, save and compare all come through here, so a file that one refuses the others
// refuse with the same words.
#include <atomic>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/io/PresetLibrary.h"
#include "core/session/ScheduleInput.h"
#include "core/util/Result.h"

namespace mario {

// Why a file did not open: it cannot be read or parsed (or the config cannot be generated), its
// plan breaks a rule of the execution model, or it is well-formed but deadlocks (exit code 3).
enum class OpenProblem { None, Unreadable, InvalidPlan, Deadlock };

struct OpenedSchedule {
    ScheduleInput input;  // the file's own passes; no edits
    OpenProblem problem = OpenProblem::None;
    std::string error;  // one line naming the file and what is wrong
    bool ok() const { return problem == OpenProblem::None; }
};

// Never throws: whatever escapes the readers (memory on a hostile file) becomes the error line.
// `cancel` stops a config's layer-split search (session/InputFile.h); the caller that sets it
// discards the result.
OpenedSchedule openSchedule(const std::string& path, const PresetLibrary& presets,
                            const std::atomic<bool>* cancel = nullptr);
// The same for a config held as a JSON document (loadConfigDocument): a sweep's points open
// through here, so each is refused or accepted exactly as the file would be by `mario simulate`.
OpenedSchedule openConfigDocument(const nlohmann::json& document, const PresetLibrary& presets,
                                  const std::string& baseDir, const std::string& label,
                                  const std::atomic<bool>* cancel = nullptr);

// Why `input` cannot be saved whole at `path`, or nothing when it can: a path ending in
// ".config.json" cannot hold hand edits, nor a schedule opened from a plan (it has no config).
// A plan path holds everything. The window asks it before offering to save in place.
std::optional<std::string> saveRefusal(const std::string& path, const ScheduleInput& input);

// A path ending in ".config.json" writes the input's config with its current passes (unless
// saveRefusal says why not); any other path writes `shown`, the schedule as shown (passes and
// edits applied), which is null while nothing has been computed yet. Written whole or not at all.
Result<bool> saveSchedule(const std::string& path, const ScheduleInput& input, const Plan* shown);

}  // namespace mario
