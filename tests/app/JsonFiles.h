#pragma once
// The window's tests read the repository's JSON files (examples, presets, measured plans) and
// write variations of them for the window to open: one reader and one writer for all of them.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

namespace mario::test {

// The object at the top of `path`; empty when it cannot be read.
inline QJsonObject readJsonObject(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object() : QJsonObject();
}

// Writes `object` to `path`, replacing it; false when it cannot be written.
inline bool writeJsonObject(const QString& path, const QJsonObject& object) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(QJsonDocument(object).toJson()) > 0;
}

}  // namespace mario::test
