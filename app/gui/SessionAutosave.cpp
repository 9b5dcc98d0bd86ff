#include "app/gui/SessionAutosave.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <QStandardPaths>
#include <QUuid>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "app/gui/AutosaveFile.h"

namespace mario::gui {

QString SessionAutosave::defaultDirectory() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave");
}

QString SessionAutosave::lockPathOf(const QString& autosavePath) {
    QString base = autosavePath;
    base.chop(static_cast<int>(qstrlen(AutosaveFile::kSuffix)));
    return base + QStringLiteral(".lock");
}

SessionAutosave::SessionAutosave(const QString& directory, QObject* parent) : QObject(parent) {
    QDir().mkpath(directory);
    const QString id = QUuid::createUuid().toString(QUuid::WithoutBraces).left(8);
    path_ = QDir(directory).filePath(QStringLiteral("session-%1-%2%3")
                                         .arg(QCoreApplication::applicationPid())
                                         .arg(id, QLatin1String(AutosaveFile::kSuffix)));
    lock_ = std::make_unique<QLockFile>(lockPathOf(path_));
    // Age alone never makes a live session's lock stale: only a dead owner does.
    lock_->setStaleLockTime(0);
    if (!lock_->tryLock(0))
        qWarning("autosave: cannot lock %s; a crash may not be offered back", qPrintable(lock_->fileName()));
    writer_.setMaxThreadCount(1);
}

SessionAutosave::~SessionAutosave() { writer_.waitForDone(); }

void SessionAutosave::save(const ScheduleInput& state, const QString& originalPath) {
    save(std::make_shared<const ScheduleInput>(state), originalPath);
}

void SessionAutosave::save(std::shared_ptr<const ScheduleInput> state, const QString& originalPath) {
    if (discarded_ || !state) return;
    QPointer<SessionAutosave> self(this);
    // Serializing (a few MB for a large plan) and the write happen on the writer thread.
    (void)QtConcurrent::run(&writer_, [self, state, originalPath, path = path_] {
        QString error;
        bool ok = false;
        try {
            ok = AutosaveFile::writeAtomically(path, AutosaveFile::serialize(*state, originalPath), &error);
        } catch (const std::exception& e) {
            error = path + QStringLiteral(": cannot write the autosave (%1)").arg(QString::fromLocal8Bit(e.what()));
        }
        QMetaObject::invokeMethod(
            self,
            [self, ok, error, path] {
                if (!self) return;
                if (ok) emit self->written(path);
                else emit self->writeFailed(error);
            },
            Qt::QueuedConnection);
    });
}

void SessionAutosave::waitForPendingWrite() { writer_.waitForDone(); }

void SessionAutosave::discard() {
    discarded_ = true;
    writer_.waitForDone();
    QFile::remove(path_);
    lock_->unlock();  // removes the lock file
}

QStringList SessionAutosave::orphans(const QString& directory) {
    QDir dir(directory);
    QFileInfoList files = dir.entryInfoList({QStringLiteral("*") + QLatin1String(AutosaveFile::kSuffix)}, QDir::Files);
    std::sort(files.begin(), files.end(),
              [](const QFileInfo& a, const QFileInfo& b) { return a.lastModified() > b.lastModified(); });
    QStringList found;
    for (const QFileInfo& file : files) {
        // A live session holds its lock; tryLock succeeds (removing a stale lock first) only
        // when the owner is gone. The lock is released at once: the restore claims the file
        // by opening it, and Later leaves it for the next start.
        QLockFile probe(lockPathOf(file.absoluteFilePath()));
        probe.setStaleLockTime(0);
        if (!probe.tryLock(0)) continue;
        probe.unlock();
        found << file.absoluteFilePath();
    }
    return found;
}

void SessionAutosave::removeOrphan(const QString& autosavePath) {
    QFile::remove(autosavePath);
    QFile::remove(lockPathOf(autosavePath));
}

}  // namespace mario::gui
