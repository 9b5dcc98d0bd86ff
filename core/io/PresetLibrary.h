#pragma once
// The bundled model and hardware presets (profiles/models/*.json, profiles/hardware/*.json)
// and the parsers for their JSON form, which config files also use for inline objects.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/model/HardwareConfig.h"
#include "core/model/ModelConfig.h"
#include "core/util/Result.h"

namespace mario {

class PresetLibrary {
public:
    // A library over an explicit folder; a folder that does not exist gives no presets.
    explicit PresetLibrary(std::string directory);

    // Finds the profiles folder, first match wins:
    //   1. the environment variable MARIO_PROFILES_DIR (a user's own presets);
    //   2. <folder of executablePath>/../share/mario/profiles (a relocated install);
    //   3. the install prefix the library was built for;
    //   4. the source tree's profiles/ (running from a build folder).
    // A folder counts when it has a models/ or hardware/ subfolder.
    static Result<PresetLibrary> locate(const std::string& executablePath = {});
    // The folders locate() tries, in order (for error messages and --help).
    static std::vector<std::string> searchPath(const std::string& executablePath = {});

    const std::string& directory() const { return directory_; }

    // Preset names are file stems, sorted.
    std::vector<std::string> modelNames() const;
    std::vector<std::string> hardwareNames() const;
    // Measured profiles: *.profile.json in the folder itself, without that suffix.
    std::vector<std::string> profileNames() const;

    // Case-insensitive lookup; the error lists the known names.
    Result<ModelConfig> model(std::string_view name) const;
    Result<HardwareConfig> hardware(std::string_view name) const;

    // A relative path made absolute against the library folder (absolute paths pass through).
    std::string resolve(const std::string& path) const;
    // A measured profile by file name or by the bare name profileNames() lists
    // ("cpu-tiny" → <folder>/cpu-tiny.profile.json), resolved as resolve() does.
    std::string resolveProfile(const std::string& nameOrPath) const { return profileFile(resolve(nameOrPath)); }
    // PATH.profile.json when PATH is a bare profile name (no file of its own, but that one
    // exists); PATH otherwise.
    static std::string profileFile(const std::string& path);
    // What a profile is called in lists and messages: its file name without .profile.json.
    static std::string profileName(const std::string& path);

    // Parse an object in preset form. path is the object's JSON path ("model") for errors.
    // Validation covers what makes the cost model meaningless (non-positive sizes, heads that
    // do not divide the hidden size), not whether a shape is a sensible model.
    static Result<ModelConfig> parseModel(const nlohmann::json& object, const std::string& path);
    static Result<HardwareConfig> parseHardware(const nlohmann::json& object, const std::string& path);
    static nlohmann::json modelToJson(const ModelConfig& model);
    static nlohmann::json hardwareToJson(const HardwareConfig& hardware);
    // A whole preset file (profiles/hardware/NAME.json): the header, every field, where the
    // numbers come from (`notes`) and, optionally, the measurements they were fitted to
    // (`source`). `mario-executor calibrate` writes its presets with it; parseHardware reads it.
    static nlohmann::json hardwarePreset(const HardwareConfig& hardware, const std::string& notes,
                                         const nlohmann::json& source);

private:
    std::vector<std::string> namesIn(const std::string& subfolder, std::string_view suffix) const;
    Result<std::string> findFile(const std::string& subfolder, std::string_view kind, std::string_view name) const;

    std::string directory_;
};

}  // namespace mario
