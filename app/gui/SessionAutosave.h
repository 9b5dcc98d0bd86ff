#pragma once
// One session's autosave: a file of its own in the autosave folder, named after the process
// and a fresh id, so a second window, a second workbench or a --screenshot run never writes
// over another session's file. Beside it a lock file (QLockFile: pid, host and program name)
// says the session is alive; an autosave whose lock is free or stale belongs to a session
// that crashed, and the next start offers it back (orphans()). A clean exit removes both.
#include <QLockFile>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <memory>

#include "core/session/ScheduleInput.h"

namespace mario::gui {

class SessionAutosave : public QObject {
    Q_OBJECT
public:
    // The folder every session writes into: <app data>/autosave.
    static QString defaultDirectory();
    explicit SessionAutosave(const QString& directory = defaultDirectory(), QObject* parent = nullptr);
    ~SessionAutosave() override;  // waits for a pending write; keeps the file (see discard)

    QString path() const { return path_; }
    // Serializes and writes off the GUI thread, one write at a time, so consecutive saves
    // never interleave; a failure is reported by writeFailed (the window's status bar).
    void save(const ScheduleInput& state, const QString& originalPath);
    // The same without a copy of the state on the GUI thread (the document's states are shared).
    void save(std::shared_ptr<const ScheduleInput> state, const QString& originalPath);
    void waitForPendingWrite();
    // A clean exit: the file and the lock go. Until then the file outlives any crash.
    void discard();

    // Autosaves in `directory` whose session is gone (no live lock), newest first.
    static QStringList orphans(const QString& directory = defaultDirectory());
    // Deletes an orphan and its lock (the user chose Discard).
    static void removeOrphan(const QString& autosavePath);
    static QString lockPathOf(const QString& autosavePath);

signals:
    void writeFailed(const QString& error);
    void written(const QString& path);

private:
    QString path_;
    std::unique_ptr<QLockFile> lock_;
    QThreadPool writer_;
    bool discarded_ = false;
};

}  // namespace mario::gui
