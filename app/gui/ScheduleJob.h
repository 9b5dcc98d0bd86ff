#pragma once
// One computation of the window, from the user's action to everything the window shows: a
// file read (or settings turned into a plan), the passes and simulations, and the charts' and
// summary's data (ShownSchedule). Pure and thread-safe: the document runs it on a worker
// thread, reporting each step so the window shows how far it got, and stops between steps
// once cancelled. Every failure, an exception from below included, ends as one error line.
#include <QString>
#include <atomic>
#include <functional>
#include <memory>

#include "app/gui/ShownSchedule.h"
#include "core/io/PresetLibrary.h"

namespace mario::gui {

struct ScheduleJob {
    enum class Kind {
        Compute,   // `input` as it is
        Generate,  // `input` with its source plan generated from its config first
        Open       // the file at `path` (a config, a plan or an autosave)
    };
    Kind kind = Kind::Compute;
    SharedInput input;
    QString path;
    PresetLibrary presets{std::string{}};  // Open: for the file's model and hardware names
    // Set by whoever cancels or supersedes the job (ScheduleJobRunner): the passes poll it, so
    // a cancel takes effect inside a step, not only between steps.
    std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);

    static ScheduleJob compute(SharedInput input, bool generate) {
        ScheduleJob job;
        job.kind = generate ? Kind::Generate : Kind::Compute;
        job.input = std::move(input);
        return job;
    }
    static ScheduleJob open(const QString& path, const PresetLibrary& presets) {
        ScheduleJob job;
        job.kind = Kind::Open;
        job.path = path;
        job.presets = presets;
        return job;
    }
};

struct ScheduleJobResult {
    bool ok = false;
    bool cancelled = false;
    QString error;            // when neither ok nor cancelled: one line
    bool deadlocked = false;  // Open: the file is well-formed but its plan deadlocks
    SharedShown shown;        // when ok
    QString documentPath;     // Open: the file, or an autosave's original
    bool restored = false;    // Open: an autosave
};

// The steps a job reports, 0 to kScheduleJobSteps − 1. Returning false stops the job before
// the step (cancelled).
inline constexpr int kScheduleJobSteps = 4;
using JobProgress = std::function<bool(int step, const QString& what)>;

ScheduleJobResult runScheduleJob(const ScheduleJob& job, const JobProgress& progress);

}  // namespace mario::gui
