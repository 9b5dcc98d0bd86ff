#include "DocumentLoader.h"

#include <QFile>
#include <QFileInfo>
#include <exception>
#include <new>

#include "AutosaveFile.h"
#include "io/InputFile.h"
#include "model/PresetLibrary.h"
#include "sim/Validator.h"

namespace mario::gui {
namespace {

LoadedDocument load(const QString& path, const PresetLibrary& presets) {
    LoadedDocument out;
    if (AutosaveFile::isAutosavePath(path)) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            out.error = path + QStringLiteral(": cannot open the file");
            return out;
        }
        auto session = AutosaveFile::parse(file.readAll(), path, presets, &out.error);
        if (!session) return out;
        out.state = std::move(session->state);
        out.path = session->originalPath;
        out.restored = true;
        out.ok = true;
        return out;
    }
    auto input = loadInputFile(path.toStdString(), presets);
    if (!input) {
        out.error = QString::fromStdString(input.error().message);
        return out;
    }
    const ValidationReport report = Validator::validate(input->plan);
    if (!report.ok()) {
        out.error = path + QStringLiteral(": ") + QString::fromStdString(report.summary());
        out.deadlocked = report.issues.empty() && !report.deadlock.empty();
        return out;
    }
    out.state.config = std::move(input->config);
    out.state.source = std::move(input->plan);
    out.state.passes = std::move(input->file_passes);
    // Absolute, so that a restored session names the same file from any working directory.
    out.path = QFileInfo(path).absoluteFilePath();
    out.ok = true;
    return out;
}

}  // namespace

LoadedDocument loadDocument(const QString& path, const PresetLibrary& presets) {
    // Core reports errors as values; this is the window's last line of defence at the file
    // boundary, so that no input, however hostile, ends the session.
    try {
        return load(path, presets);
    } catch (const std::bad_alloc&) {
        LoadedDocument out;
        out.error = path + QStringLiteral(": too large to load (out of memory)");
        return out;
    } catch (const std::exception& e) {
        LoadedDocument out;
        out.error = path + QStringLiteral(": cannot be read (%1)").arg(QString::fromLocal8Bit(e.what()));
        return out;
    }
}

}  // namespace mario::gui
