#include "AutosaveFile.h"

#include <QFileInfo>
#include <QSaveFile>
#include <exception>
#include <nlohmann/json.hpp>

#include "io/ConfigJson.h"
#include "io/PlanJson.h"
#include "model/PresetLibrary.h"
#include "passes/PassManager.h"

namespace mario::gui {
namespace {

using nlohmann::json;

json instructionText(const Instruction& instruction) { return toActionString(instruction); }

// One edit, checked against the source plan's devices so a damaged file cannot point past them.
std::optional<HandEdit> readEdit(const json& item, int devices, const std::string& where, std::string* error) {
    if (!item.is_object() || !item.contains("device") || !item["device"].is_number_integer() || !item.contains("moved") ||
        !item["moved"].is_string()) {
        *error = where + ": expected {\"device\": integer, \"moved\": action, \"before\": action or null}";
        return std::nullopt;
    }
    HandEdit edit;
    const auto device = item["device"].get<std::int64_t>();
    if (device < 0 || device >= devices) {
        *error = where + ".device: expected an integer in [0, " + std::to_string(devices - 1) + "] (got " + std::to_string(device) + ")";
        return std::nullopt;
    }
    edit.device = static_cast<int>(device);
    auto moved = parseAction(item["moved"].get<std::string>());
    if (!moved) {
        *error = where + ".moved: " + moved.error().message;
        return std::nullopt;
    }
    edit.moved = *moved;
    if (item.contains("before") && !item["before"].is_null()) {
        auto before = item["before"].is_string() ? parseAction(item["before"].get<std::string>())
                                                 : Result<Instruction>(makeError("expected an action string or null"));
        if (!before) {
            *error = where + ".before: " + before.error().message;
            return std::nullopt;
        }
        edit.before = *before;
    }
    return edit;
}

std::optional<AutosavedSession> parseJson(const json& root, const PresetLibrary& presets, std::string* error) {
    if (!root.is_object() || root.value("format", json()) != AutosaveFile::kFormat) {
        *error = std::string("format: expected \"") + AutosaveFile::kFormat + "\"";
        return std::nullopt;
    }
    if (!root.contains("version") || root["version"] != AutosaveFile::kVersion) {
        *error = "version: expected " + std::to_string(AutosaveFile::kVersion);
        return std::nullopt;
    }
    AutosavedSession session;
    if (root.contains("original_path") && root["original_path"].is_string())
        session.originalPath = QString::fromStdString(root["original_path"].get<std::string>());
    if (root.contains("config") && !root["config"].is_null()) {
        const std::string baseDir = QFileInfo(session.originalPath).absolutePath().toStdString();
        auto config = readConfig(root["config"], presets, session.originalPath.isEmpty() ? std::string() : baseDir);
        if (!config) {
            *error = "config: " + config.error().message;
            return std::nullopt;
        }
        session.state.config = std::move(*config);
    }
    if (!root.contains("source")) {
        *error = "source: missing (the plan)";
        return std::nullopt;
    }
    auto source = readPlan(root["source"]);  // validated: a damaged file must not reach the simulator
    if (!source) {
        *error = "source: " + source.error().message;
        return std::nullopt;
    }
    session.state.source = std::move(*source);
    std::vector<std::string> names;
    if (root.contains("passes")) {
        if (!root["passes"].is_array()) {
            *error = "passes: expected an array of pass names";
            return std::nullopt;
        }
        for (const json& name : root["passes"]) names.push_back(name.is_string() ? name.get<std::string>() : name.dump());
    }
    auto passes = parsePassNames(names);
    if (!passes) {
        *error = "passes: " + passes.error().message;
        return std::nullopt;
    }
    session.state.passes = std::move(*passes);
    const json edits = root.value("edits", json::array());
    if (!edits.is_array()) {
        *error = "edits: expected an array";
        return std::nullopt;
    }
    const int devices = static_cast<int>(session.state.source.devices.size());
    for (std::size_t i = 0; i < edits.size(); ++i) {
        auto edit = readEdit(edits[i], devices, "edits[" + std::to_string(i) + "]", error);
        if (!edit) return std::nullopt;
        session.state.edits.push_back(*edit);
    }
    return session;
}

}  // namespace

bool AutosaveFile::isAutosavePath(const QString& path) { return path.endsWith(QLatin1String(kSuffix)); }

QByteArray AutosaveFile::serialize(const DocumentState& state, const QString& originalPath) {
    json root = {{"format", kFormat}, {"version", kVersion}, {"original_path", originalPath.toStdString()}};
    root["config"] = state.config ? writeConfig(*state.config) : json();
    root["source"] = writePlan(state.source);
    json passes = json::array();
    for (PassId pass : state.passes) passes.push_back(std::string(passName(pass)));
    root["passes"] = std::move(passes);
    json edits = json::array();
    for (const HandEdit& edit : state.edits)
        edits.push_back({{"device", edit.device},
                         {"moved", instructionText(edit.moved)},
                         {"before", edit.before ? instructionText(*edit.before) : json()}});
    root["edits"] = std::move(edits);
    return QByteArray::fromStdString(root.dump(1) + "\n");
}

std::optional<AutosavedSession> AutosaveFile::parse(const QByteArray& bytes, const QString& path,
                                                    const PresetLibrary& presets, QString* error) {
    std::string message;
    try {
        const json root = json::parse(bytes.constBegin(), bytes.constEnd());
        if (auto session = parseJson(root, presets, &message)) return session;
    } catch (const json::exception&) {
        message = "malformed JSON (the autosave was damaged)";
    }
    *error = path + QStringLiteral(": ") + QString::fromStdString(message);
    return std::nullopt;
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
