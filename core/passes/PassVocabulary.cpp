#include "core/passes/PassVocabulary.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace mario {

std::string_view passName(PassId pass) {
    switch (pass) {
        case PassId::Checkpoint: return "checkpoint";
        case PassId::Overlap: return "overlap";
        case PassId::Redundancy: return "redundancy";
        case PassId::Prepose: return "prepose";
        case PassId::Relax: return "relax";
        case PassId::BoundW: return "bound-w";
        case PassId::Hide: return "hide";
    }
    return "?";
}

const std::vector<PassId>& paperPasses() {
    static const std::vector<PassId> passes{PassId::Checkpoint, PassId::Overlap, PassId::Redundancy, PassId::Prepose};
    return passes;
}

const std::vector<PassId>& allPasses() {
    static const std::vector<PassId> passes{PassId::Checkpoint, PassId::Overlap, PassId::Redundancy, PassId::Prepose,
                                            PassId::Relax,      PassId::BoundW,  PassId::Hide};
    return passes;
}

bool isBeyondPaper(PassId pass) { return pass == PassId::Relax || pass == PassId::BoundW || pass == PassId::Hide; }

std::string passNameList() {
    std::string text;
    for (PassId pass : allPasses()) text += std::string(passName(pass)) + ", ";
    return text.substr(0, text.size() - 2);
}

std::optional<PassId> parsePassName(std::string_view name) {
    // The short names, and the paper's long ones ("apply-checkpoint", "overlap-recompute", …).
    constexpr std::pair<std::string_view, PassId> kLongNames[] = {
        {"apply-checkpoint", PassId::Checkpoint},  {"overlap-recompute", PassId::Overlap},
        {"remove-redundancy", PassId::Redundancy}, {"prepose-forward", PassId::Prepose},
        {"relax-checkpoint", PassId::Relax},       {"bound-weight-gradients", PassId::BoundW},
        {"hide-recompute", PassId::Hide}};
    for (PassId pass : allPasses())
        if (passName(pass) == name) return pass;
    for (const auto& [longName, pass] : kLongNames)
        if (longName == name) return pass;
    return std::nullopt;
}

Result<std::vector<PassId>> parsePassNames(const std::vector<std::string>& names) {
    std::vector<PassId> passes;
    for (const auto& raw : names) {
        std::string name;
        for (char c : raw)
            if (!std::isspace(static_cast<unsigned char>(c)))
                name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (name.empty()) continue;
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
