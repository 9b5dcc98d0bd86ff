#include "core/passes/PassVocabulary.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "core/passes/PassRegistry.h"

namespace mario {

std::string_view passName(PassId pass) { return passInfo(pass).name; }

const std::vector<PassId>& paperPasses() {
    static const std::vector<PassId> passes = [] {
        std::vector<PassId> out;
        for (const PassInfo& info : passTable())
            if (!info.beyond_paper) out.push_back(info.id);
        return out;
    }();
    return passes;
}

const std::vector<PassId>& allPasses() {
    static const std::vector<PassId> passes = [] {
        std::vector<PassId> out;
        for (const PassInfo& info : passTable()) out.push_back(info.id);
        return out;
    }();
    return passes;
}

bool isBeyondPaper(PassId pass) { return passInfo(pass).beyond_paper; }

std::string passNameList() {
    std::string text;
    for (PassId pass : allPasses()) text += std::string(passName(pass)) + ", ";
    return text.substr(0, text.size() - 2);
}

std::optional<PassId> parsePassName(std::string_view name) {
    // The short names, and the paper's long ones ("apply-checkpoint", "overlap-recompute", …).
    for (const PassInfo& info : passTable())
        if (info.name == name || info.long_name == name) return info.id;
    return std::nullopt;
}

Result<std::vector<PassId>> parsePassNames(const std::vector<std::string>& names) {
    std::vector<PassId> passes;
    bool none = false, some = false;
    for (const auto& raw : names) {
        std::string name;
        for (char c : raw)
            if (!std::isspace(static_cast<unsigned char>(c)))
                name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (name.empty()) continue;
        // "none" beside a pass names two contradictory lists; read as one list it silently
        // meant the other passes ("none,all" = all), where a sweep's user meant two pass sets.
        if (name == "none") none = true;
        else some = true;
        if (none && some)
            return makeError("\"none\" cannot be listed with other passes (it means no pass; a sweep's "
                             "pass sets are separated by ';', as in none;all)");
        if (name == "all") {
            for (PassId pass : paperPasses())
                if (std::find(passes.begin(), passes.end(), pass) == passes.end()) passes.push_back(pass);
            continue;
        }
        if (name == "none") continue;
        auto pass = parsePassName(name);
        if (!pass) return makeError("unknown pass \"" + raw + "\" (expected " + passNameList() + ", all or none)");
        if (std::find(passes.begin(), passes.end(), *pass) == passes.end()) passes.push_back(*pass);
    }
    return passes;
}

Result<std::vector<PassId>> parsePassList(std::string_view list) {
    std::vector<std::string> names;
    std::string current;
    for (char c : list) {
        if (c == ',') {
            names.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    names.push_back(current);
    return parsePassNames(names);
}

std::vector<std::string> passNames(const std::vector<PassId>& passes) {
    std::vector<std::string> names;
    for (PassId pass : passes) names.emplace_back(passName(pass));
    return names;
}

}  // namespace mario
