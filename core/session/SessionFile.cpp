#include "core/session/SessionFile.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/JsonFile.h"
#include "core/io/PlanJson.h"
#include "core/passes/PassVocabulary.h"

namespace mario {
namespace {

using nlohmann::json;

// One edit, checked against the source plan's devices so a damaged file cannot point past them.
Result<HandEdit> readEdit(const json& item, int devices, const std::string& where) {
    if (!item.is_object() || !item.contains("device") || !item["device"].is_number_integer() ||
        !item.contains("moved") || !item["moved"].is_string())
        return makeError(where + ": expected {\"device\": integer, \"moved\": action, \"before\": action or null}");
    HandEdit edit;
    const auto device = item["device"].get<std::int64_t>();
    if (device < 0 || device >= devices)
        return makeError(where + ".device: expected an integer in [0, " + std::to_string(devices - 1) + "] (got " +
                         std::to_string(device) + ")");
    edit.device = static_cast<int>(device);
    auto moved = parseAction(item["moved"].get<std::string>());
    if (!moved) return makeError(where + ".moved: " + moved.error().message);
    edit.moved = *moved;
    if (item.contains("before") && !item["before"].is_null()) {
        auto before = item["before"].is_string() ? parseAction(item["before"].get<std::string>())
                                                 : Result<Instruction>(makeError("expected an action string or null"));
        if (!before) return makeError(where + ".before: " + before.error().message);
        edit.before = *before;
    }
    return edit;
}

Result<SessionFile> readSession(const json& root, const PresetLibrary& presets) {
    if (!root.is_object() || root.value("format", json()) != SessionFile::kFormat)
        return makeError(std::string("format: expected \"") + SessionFile::kFormat + "\"");
    if (!root.contains("version") || root["version"] != SessionFile::kVersion)
        return makeError("version: expected " + std::to_string(SessionFile::kVersion));
    SessionFile session;
    if (root.contains("original_path") && root["original_path"].is_string())
        session.original_path = root["original_path"].get<std::string>();
    if (root.contains("config") && !root["config"].is_null()) {
        // Relative paths in the config (its profile) are relative to the file it came from.
        const std::string baseDir = session.original_path.empty()
                                        ? std::string()
                                        : std::filesystem::absolute(session.original_path).parent_path().string();
        auto config = readConfig(root["config"], presets, baseDir);
        if (!config) return makeError("config: " + config.error().message);
        session.input.config = std::move(*config);
    }
    if (!root.contains("source")) return makeError("source: missing (the plan)");
    auto source = readPlan(root["source"]);  // validated: a damaged file must not reach the simulator
    if (!source) return makeError("source: " + source.error().message);
    session.input.source = std::move(*source);
    std::vector<std::string> names;
    if (root.contains("passes")) {
        if (!root["passes"].is_array()) return makeError("passes: expected an array of pass names");
        for (const json& name : root["passes"])
            names.push_back(name.is_string() ? name.get<std::string>() : name.dump());
    }
    auto passes = parsePassNames(names);
    if (!passes) return makeError("passes: " + passes.error().message);
    session.input.passes = std::move(*passes);
    if (root.contains("pass_effort")) {
        const json& effort = root["pass_effort"];
        struct Field {
            const char* key;
            int PassEffort::*field;
            long long most;
        };
        for (const Field& f : {Field{"prepose_simulations", &PassEffort::prepose_simulations, 1'000'000},
                               Field{"hide_simulations", &PassEffort::hide_simulations, 1'000'000},
                               Field{"reorder_evaluations", &PassEffort::reorder_evaluations, 1'000'000'000}}) {
            const json value = effort.is_object() ? effort.value(f.key, json(0)) : json();
            if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > f.most)
                return makeError(std::string("pass_effort.") + f.key + ": expected a whole number in [0, " +
                                 std::to_string(f.most) + "]");
            session.input.effort.*f.field = value.get<int>();
        }
    }
    const json edits = root.value("edits", json::array());
    if (!edits.is_array()) return makeError("edits: expected an array");
    const int devices = static_cast<int>(session.input.source.devices.size());
    for (std::size_t i = 0; i < edits.size(); ++i) {
        auto edit = readEdit(edits[i], devices, "edits[" + std::to_string(i) + "]");
        if (!edit) return edit.error();
        session.input.edits.push_back(*edit);
    }
    return session;
}

}  // namespace

std::string writeSessionFile(const ScheduleInput& input, const std::string& originalPath) {
    json root = {{"format", SessionFile::kFormat}, {"version", SessionFile::kVersion}, {"original_path", originalPath}};
    root["config"] = input.config ? writeConfig(*input.config) : json();
    root["source"] = writePlan(input.source);
    root["passes"] = passNames(input.passes);
    if (input.effort.capped())
        root["pass_effort"] = {{"prepose_simulations", input.effort.prepose_simulations},
                               {"hide_simulations", input.effort.hide_simulations},
                               {"reorder_evaluations", input.effort.reorder_evaluations}};
    json edits = json::array();
    for (const HandEdit& edit : input.edits)
        edits.push_back({{"device", edit.device},
                         {"moved", toActionString(edit.moved)},
                         {"before", edit.before ? json(toActionString(*edit.before)) : json()}});
    root["edits"] = std::move(edits);
    return root.dump(1) + "\n";
}

Result<SessionFile> readSessionFile(const std::string& text, const PresetLibrary& presets) {
    // Parsed as every JSON file is: the line and column of damage, and the same memory budget.
    auto root = parseJsonText(text, "");
    if (!root) return makeError(root.error().message + " (the autosave was damaged)");
    try {
        return readSession(*root, presets);
    } catch (const json::exception&) {
        return makeError("malformed JSON (the autosave was damaged)");
    }
}

}  // namespace mario
