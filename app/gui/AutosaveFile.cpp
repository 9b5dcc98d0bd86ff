#include "app/gui/AutosaveFile.h"

#include <QSaveFile>

#include "core/session/SessionFile.h"

namespace mario::gui {

bool AutosaveFile::isAutosavePath(const QString& path) { return path.endsWith(QLatin1String(kSuffix)); }

QByteArray AutosaveFile::serialize(const ScheduleInput& state, const QString& originalPath) {
    return QByteArray::fromStdString(writeSessionFile(state, originalPath.toStdString()));
}

std::optional<AutosavedSession> AutosaveFile::parse(const QByteArray& bytes, const QString& path,
                                                    const PresetLibrary& presets, QString* error) {
    auto session = readSessionFile(bytes.toStdString(), presets);
    if (!session) {
        *error = path + QStringLiteral(": ") + QString::fromStdString(session.error().message);
        return std::nullopt;
    }
    return AutosavedSession{std::move(session->input), QString::fromStdString(session->original_path)};
}

bool AutosaveFile::writeAtomically(const QString& path, const QByteArray& bytes, QString* error,
                                   const std::function<void(qint64)>& afterChunk) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = path + QStringLiteral(": cannot write the autosave (%1)").arg(file.errorString());
        return false;
    }
    constexpr qint64 kChunk = 1 << 20;
    for (qint64 offset = 0; offset < bytes.size(); offset += kChunk) {
        const qint64 length = std::min(kChunk, bytes.size() - offset);
        if (file.write(bytes.constData() + offset, length) != length) break;  // commit() reports it
        if (afterChunk) afterChunk(offset + length);
    }
    // commit() flushes, fsyncs and renames; it fails (leaving the old file) on any write error.
    if (!file.commit()) {
        *error = path + QStringLiteral(": cannot write the autosave (%1)").arg(file.errorString());
        return false;
    }
    return true;
}

}  // namespace mario::gui
