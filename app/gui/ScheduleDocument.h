#pragma once
// The open schedule: the user's decisions (ScheduleInput), their undo history, and the
// latest computed result. Every change goes through the undo stack; computations run off
// the GUI thread with a generation counter so that a stale result is dropped, never shown.
#include <QHash>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QUndoStack>
#include <memory>

#include "app/gui/DocumentLoader.h"
#include "app/gui/ScheduleComputation.h"
#include "core/model/PresetLibrary.h"
#include "core/session/ScheduleInput.h"

namespace mario::gui {

class SessionAutosave;

class ScheduleDocument : public QObject {
    Q_OBJECT
public:
    explicit ScheduleDocument(QObject* parent = nullptr);
    ~ScheduleDocument() override;

    QUndoStack* undoStack() { return &undo_; }
    const ScheduleInput& state() const { return state_; }
    const ComputedSchedule& current() const { return current_; }
    bool hasSchedule() const { return current_.ok; }
    const PresetLibrary& presets() const { return presets_; }
    QString path() const { return path_; }

    // Opens a config, a plan or an autosave (restore) on the calling thread. On failure the
    // session is left exactly as it was and `error` says what is wrong and where.
    // `deadlocked` (optional) tells a plan that deadlocks from a bad file (exit codes 3 and 2).
    bool open(const QString& path, QString* error, bool* deadlocked = nullptr);
    // The same on a worker thread (reading, validating and generating a large file takes
    // seconds): openStarted now, then openFinished, or nothing more after cancelOpen().
    // The session stays as it was until a successful result arrives.
    void openAsync(const QString& path);
    void cancelOpen();
    bool isOpening() const { return !opening_.isEmpty(); }
    // A *.config.json path writes the config (when the schedule came from one); anything
    // else writes the current plan, passes and edits applied.
    bool saveAs(const QString& path, QString* error) const;

    void setPassEnabled(PassId pass, bool enabled);
    void setPasses(const std::vector<PassId>& passes, const QString& description);
    // Regenerates the schedule from a changed config (the settings panel). Refused with a
    // status message when the config cannot be built.
    bool setConfig(const Config& config, QString* error);
    // A drag: the box `programIndex` of `device` dropped at `dropTimeMs`. Validated against
    // the shown plan at once; refused moves leave everything as it was.
    bool requestMove(int device, int programIndex, double dropTimeMs, QString* reason);

    // Used by undo commands and by the above.
    void applyState(const ScheduleInput& state);
    // Every computed state is then written to this session's own autosave file, so that a
    // crash loses nothing (off by default: tests and --screenshot write none).
    void enableAutosave(const QString& directory);
    SessionAutosave* autosave() const { return autosave_.get(); }
    // A clean exit: this session's autosave is removed.
    void discardAutosave();
    // Tests and --screenshot: compute on the calling thread.
    void setSynchronous(bool synchronous) { synchronous_ = synchronous; }
    bool synchronous() const { return synchronous_; }

signals:
    void computed();
    void computationFailed(const QString& error);
    void statusMessage(const QString& message);
    void pathChanged(const QString& path);
    void openStarted(const QString& path);
    void openFinished(const QString& path, bool ok, const QString& error);

private:
    void pushState(ScheduleInput next, const QString& description);
    void recompute();
    void accept(ComputedSchedule result);
    void adopt(LoadedDocument loaded, const QString& file);
    void writeAutosave();

    PresetLibrary presets_;
    QUndoStack undo_;
    ScheduleInput state_;
    ComputedSchedule current_;
    QString path_;
    quint64 generation_ = 0;
    // Recent results by scheduleFingerprint(): toggling a pass back, undo and redo show at once.
    QHash<quint64, ComputedSchedule> cache_;
    std::unique_ptr<SessionAutosave> autosave_;
    QString restoredFrom_;  // the crashed session's autosave, removed once ours is written
    quint64 openGeneration_ = 0;
    QString opening_;  // the file being opened off the GUI thread, empty when none
    QList<quint64> cacheOrder_;
    bool synchronous_ = false;
};

}  // namespace mario::gui
