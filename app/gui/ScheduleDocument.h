#pragma once
// The open schedule: the user's decisions (DocumentState), their undo history, and the
// latest computed result. Every change goes through the undo stack; computations run off
// the GUI thread with a generation counter so that a stale result is dropped, never shown.
#include <QObject>
#include <QString>
#include <QUndoStack>
#include <QHash>
#include <QThreadPool>
#include <memory>

#include "DocumentState.h"
#include "ScheduleComputation.h"
#include "model/PresetLibrary.h"

namespace mario::gui {

class ScheduleDocument : public QObject {
    Q_OBJECT
public:
    explicit ScheduleDocument(QObject* parent = nullptr);
    ~ScheduleDocument() override;

    QUndoStack* undoStack() { return &undo_; }
    const DocumentState& state() const { return state_; }
    const ComputedSchedule& current() const { return current_; }
    bool hasSchedule() const { return current_.ok; }
    const PresetLibrary& presets() const { return presets_; }
    QString path() const { return path_; }

    // Opens a config or plan. On failure the session is left exactly as it was and `error`
    // says what is wrong and where.
    bool open(const QString& path, QString* error);
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
    void applyState(const DocumentState& state);
    // Where every computed state is written, so that a crash loses nothing.
    static QString autosavePath();
    // Tests and --screenshot: compute on the calling thread.
    void setSynchronous(bool synchronous) { synchronous_ = synchronous; }

signals:
    void computed();
    void computationFailed(const QString& error);
    void statusMessage(const QString& message);
    void pathChanged(const QString& path);

private:
    void pushState(DocumentState next, const QString& description);
    void recompute();
    void accept(ComputedSchedule result);
    void autosave();

    PresetLibrary presets_;
    QUndoStack undo_;
    DocumentState state_;
    ComputedSchedule current_;
    QString path_;
    quint64 generation_ = 0;
    // Recent results by stateKey(): toggling a pass back, undo and redo show at once.
    QHash<quint64, ComputedSchedule> cache_;
    QThreadPool autosaver_;  // one autosave writer; its destructor waits for a pending write
    QList<quint64> cacheOrder_;
    bool synchronous_ = false;
};

}  // namespace mario::gui
