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
#include "core/io/PresetLibrary.h"
#include "core/session/ScheduleInput.h"
#include "views/TimeBase.h"

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
    // Unit-cost configs (the paper's teaching model) have time units, not milliseconds.
    views::TimeBase timeBase() const;

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
    // A *.config.json path writes the config (refused when the schedule came from a plan or
    // has hand edits: a config cannot hold them); anything else writes the current plan,
    // passes and edits applied. A successful save makes `path` the document's file and the
    // document unmodified.
    bool saveAs(const QString& path, QString* error);
    // Whether Save can write to path() without asking where (the file exists as the document's
    // own and can hold everything the document has); otherwise Save asks as Save As does.
    bool canSaveInPlace() const;
    // Unsaved changes: an edit, toggle or setting since the last open or save (undoing back to
    // the saved state clears it), or a restored session not yet saved anywhere.
    bool isModified() const { return restoredUnsaved_ || !undo_.isClean(); }
    // The drop checker for the timeline: why dropping box `programIndex` of `device` at
    // `dropTimeMs` would be refused, or empty when it would be accepted. Answers for the same
    // insertion point are remembered until the schedule changes (a drag asks on every move).
    QString dropRefusal(int device, int programIndex, double dropTimeMs);

    void setPassEnabled(PassId pass, bool enabled);
    void setPasses(const std::vector<PassId>& passes, const QString& description);
    // Regenerates the schedule from a changed config (the settings panel). Refused with a
    // status message when the config cannot be built. The passes' effort returns to the
    // defaults: the schedule is no longer one the tuner measured.
    bool setConfig(const Config& config, QString* error);
    // A tuned candidate (the tuner panel): its config, the passes it was measured with and the
    // tuner's effort caps, as one undo step, so that the window computes the schedule the tuner
    // ranked. The caps stay through pass toggles and edits, until the settings change or
    // another file opens.
    bool openTuned(const Config& config, const std::vector<PassId>& passes, PassEffort effort,
                   const QString& description, QString* error);
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
    void modifiedChanged(bool modified);
    // Hand edits that no longer apply after a change were set aside (undo brings them back):
    // the window shows this where it cannot be missed.
    void editsSetAside(const QString& message);

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
    bool restoredUnsaved_ = false;
    // dropRefusal's memory: (device, program index, insertion index) → reason; cleared on accept.
    QHash<QString, QString> dropAnswers_;
};

}  // namespace mario::gui
