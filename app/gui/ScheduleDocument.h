#pragma once
// The open schedule: the user's decisions (ScheduleInput), their undo history, and what the
// window shows of them. Every change goes through the undo stack. A change whose schedule is
// not known yet is computed on a worker thread first (ScheduleJob, with progress and Cancel)
// and only then becomes the document's state, so that the state, the schedule, the settings
// and the title always switch together, and a cancelled change leaves no trace.
#include <QHash>
#include <QObject>
#include <QString>
#include <QUndoStack>
#include <memory>
#include <optional>

#include "app/gui/ScheduleJobRunner.h"
#include "app/gui/ShownSchedule.h"
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
    // The state shown, whatever is being computed meanwhile.
    const ScheduleInput& state() const { return *state_; }
    SharedInput sharedState() const { return state_; }
    const ComputedSchedule& current() const;
    // The schedule shown with the charts' and summary's data (null before the first).
    SharedShown shown() const { return shown_; }
    bool hasSchedule() const { return current().ok; }
    const PresetLibrary& presets() const { return presets_; }
    QString path() const { return path_; }
    // Unit-cost configs (the paper's teaching model) have time units, not milliseconds.
    views::TimeBase timeBase() const;

    // Opens a config, a plan or an autosave (restore) and computes its schedule on the calling
    // thread. On failure the session is left exactly as it was and `error` says what is wrong
    // and where. `deadlocked` (optional) tells a plan that deadlocks from a bad file (exit
    // codes 3 and 2).
    bool open(const QString& path, QString* error, bool* deadlocked = nullptr);
    // The same on a worker thread (reading, validating, generating and computing a large file
    // takes seconds): openStarted now, then openFinished, or nothing more after a cancel.
    // The session stays as it was until the whole result arrives.
    void openAsync(const QString& path);
    bool isOpening() const { return pending_ && pending_->kind == Pending::Kind::Open; }
    // A change, undo, redo or open being computed (computationStarted … computationEnded).
    bool isComputing() const { return pending_.has_value(); }
    // A change not in the undo history yet (Undo cancels it): its name, else empty.
    QString changeComputing() const {
        return pending_ && pending_->kind == Pending::Kind::Change ? pending_->description : QString();
    }
    // Drops the computation: the schedule, settings, title and undo history stay as shown.
    void cancelComputation();
    void cancelOpen() { cancelComputation(); }
    // A *.config.json path writes the config (refused when the schedule came from a plan or
    // has hand edits: a config cannot hold them); anything else writes the current plan,
    // passes and edits applied. A successful save makes `path` the document's file and the
    // document unmodified. What is saved is what is shown.
    bool saveAs(const QString& path, QString* error);
    // Whether Save can write to path() without asking where (the file exists as the document's
    // own and can hold everything the document has); otherwise Save asks as Save As does.
    bool canSaveInPlace() const;
    // Unsaved changes in what is shown: an edit, toggle or setting since the last open or save
    // (undoing back to the saved state clears it), or a restored session not yet saved.
    bool isModified() const;
    // The What-if view's settings, kept with the document: a config saves them in its
    // "what_if" section and the autosave holds them too. They are no part of the schedule:
    // setting them computes nothing and adds no undo step, but the document is modified
    // until saved. Opening a file takes the file's (none: empty).
    const std::optional<WhatIfSection>& whatIf() const { return whatIf_; }
    void setWhatIf(const WhatIfSection& settings);
    // The drop checker for the timeline: why dropping box `programIndex` of `device` at
    // `dropTimeMs` would be refused, or empty when it would be accepted. Answers for the same
    // insertion point are remembered until the schedule changes (a drag asks on every move).
    QString dropRefusal(int device, int programIndex, double dropTimeMs);

    void setPassEnabled(PassId pass, bool enabled);
    void setPasses(const std::vector<PassId>& passes, const QString& description);
    // Regenerates the schedule from a changed config (the settings panel). Refused with a
    // status message when the config is invalid; a plan that cannot be generated is reported
    // by changeFailed. The passes' effort returns to the defaults: the schedule is no longer
    // one the tuner measured.
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
    // Edit → Undo and Redo: while a change is being computed, undo cancels it (it is not in
    // the history yet) and redo drops it first.
    void undo();
    void redo();

    // The undo commands' way in: show `state` (scheduleFingerprint `key`), at once when its
    // schedule is known, else once computed (the stack has moved; Cancel moves it back).
    // `what` names the step for the progress bar ("Undo Change settings").
    void applyState(const SharedInput& state, quint64 key, const QString& what);
    // Every computed state is then written to this session's own autosave file, so that a
    // crash loses nothing (off by default: tests and --screenshot write none).
    void enableAutosave(const QString& directory);
    SessionAutosave* autosave() const { return autosave_.get(); }
    // A clean exit: this session's autosave is removed.
    void discardAutosave();
    // Tests: forget every computed state but the one shown, so undo computes again.
    void forgetComputedStates();
    // Tests and --screenshot: compute on the calling thread.
    void setSynchronous(bool synchronous) { synchronous_ = synchronous; }
    bool synchronous() const { return synchronous_; }

signals:
    void computed();
    void computationFailed(const QString& error);
    // A change could not be computed (its plan cannot be generated, a pass failed): the
    // document stays as shown and the window says why where it cannot be missed.
    void changeFailed(const QString& error);
    void statusMessage(const QString& message);
    void pathChanged(const QString& path);
    void openStarted(const QString& path);
    void openFinished(const QString& path, bool ok, const QString& error);
    // Around every computation off the GUI thread: what it is ("Change settings", "Opening
    // x.json"), each step (of kScheduleJobSteps), and its end however it ended.
    void computationStarted(const QString& what);
    void computationProgress(int step, int steps, const QString& what);
    void computationEnded();
    void modifiedChanged(bool modified);
    // A file was opened (or restored) with its own What-if settings, or none.
    void whatIfLoaded();
    // Hand edits that no longer apply after a change were set aside (undo brings them back):
    // the window shows this where it cannot be missed.
    void editsSetAside(const QString& message);

private:
    struct Pending {
        enum class Kind { Change, Stack, Open };
        Kind kind = Kind::Change;
        SharedInput target;  // Change: the next state (source empty when generated)
        bool generate = false;
        QString description;  // Change: the undo step's name; Open: the file
        int shownIndex = 0;   // Stack: the undo index of the state shown, where Cancel returns
    };

    // Computes `next` (its plan generated first when `generate`) and pushes it as one undo
    // step once known; a change of the shown state supersedes whatever was being computed.
    void change(ScheduleInput next, bool generate, const QString& description);
    // What a change starts from: the change being computed, so that a toggle during a
    // settings change keeps both, else the state shown.
    ScheduleInput base() const;
    void start(Pending pending, ScheduleJob job);
    void finish(const ScheduleJobResult& result);
    void finishOpen(const ScheduleJobResult& result, const QString& path);
    // No job any more; with `moveBack`, an undo or redo still computing returns the stack to
    // the state shown (without: the stack is moving on to a known state). `announce`:
    // computationEnded (not when another computation takes over at once).
    void dropPending(bool moveBack = true, bool announce = true);
    void show(const SharedShown& shown);
    void remember(const SharedShown& shown);
    SharedShown cached(quint64 key) const;
    void adopt(const ScheduleJobResult& opened, const QString& file);
    void pushShown(const SharedShown& shown, const QString& description);
    void noteModified();
    void writeAutosave();
    // The state as a file holds it: the shown state with the What-if settings in its config.
    SharedInput stateToWrite() const;

    PresetLibrary presets_;
    QUndoStack undo_;
    SharedInput state_;
    SharedShown shown_;
    QString path_;
    // Recent results by scheduleFingerprint(): toggling a pass back, undo and redo show at once.
    QHash<quint64, SharedShown> cache_;
    QList<quint64> cacheOrder_;
    std::unique_ptr<SessionAutosave> autosave_;
    QString restoredFrom_;  // the crashed session's autosave, removed once ours is written
    ScheduleJobRunner jobs_;
    std::optional<Pending> pending_;
    bool quiet_ = false;  // the stack is moving back to the state shown: nothing to apply
    bool synchronous_ = false;
    bool restoredUnsaved_ = false;
    bool modifiedShown_ = false;  // what modifiedChanged last said
    std::optional<WhatIfSection> whatIf_;
    bool whatIfUnsaved_ = false;
    QString failure_;             // the last change's failure (a synchronous setConfig returns it)
    // dropRefusal's memory: (device, program index, insertion index) → reason; cleared on show.
    QHash<QString, QString> dropAnswers_;
};

}  // namespace mario::gui
