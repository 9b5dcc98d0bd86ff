#include "app/cli/Arguments.h"

#include <cstdio>

#include "core/util/WholeNumber.h"

namespace mario::cli {

std::optional<CliError> Arguments::parse(const std::vector<std::string>& args, const std::set<std::string>& withValue,
                                         const std::set<std::string>& flags, Arguments& out,
                                         const std::map<std::string, std::string>& shortNames) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        std::string name;
        if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
            name = arg.substr(2);
        } else if (arg.size() == 2 && arg[0] == '-' && shortNames.count(arg.substr(1))) {
            name = shortNames.at(arg.substr(1));
        } else if (arg.size() > 1 && arg[0] == '-') {
            return CliError{kBadInput, "unknown option " + arg};
        } else {
            out.positional_.push_back(arg);
            continue;
        }
        std::optional<std::string> inlineValue;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name)) {
            if (inlineValue) return CliError{kBadInput, "option --" + name + " takes no value"};
            out.values_[name] = "";
        } else if (withValue.count(name)) {
            if (!inlineValue) {
                if (i + 1 >= args.size()) return CliError{kBadInput, "option --" + name + " needs a value"};
                inlineValue = args[++i];
            }
            out.values_[name] = *inlineValue;
            out.repeated_[name].push_back(*inlineValue);
        } else {
            return CliError{kBadInput, "unknown option --" + name};
        }
    }
    return std::nullopt;
}

std::optional<std::string> Arguments::value(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> Arguments::values(const std::string& name) const {
    auto it = repeated_.find(name);
    return it == repeated_.end() ? std::vector<std::string>{} : it->second;
}

namespace {

// "--top: expected an integer in [1, 100000] (got "1e9")", the value cut to 40 characters.
CliError outOfRange(const std::string& name, const std::string& expected, std::string text) {
    if (text.size() > 40) text.replace(37, std::string::npos, "...");
    return CliError{kBadInput, "--" + name + ": expected " + expected + " (got \"" + text + "\")"};
}

}  // namespace

std::optional<CliError> Arguments::integerIn(const std::string& name, int min, int max, int& out) const {
    const auto text = value(name);
    if (!text) return std::nullopt;
    const auto parsed = wholeNumberIn(*text, min, max);
    if (!parsed)
        return outOfRange(name, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]", *text);
    out = static_cast<int>(*parsed);
    return std::nullopt;
}

std::optional<CliError> Arguments::numberIn(const std::string& name, double low, double high, double& out) const {
    const auto text = value(name);
    if (!text) return std::nullopt;
    const auto parsed = decimalNumberIn(*text, low, high);
    if (!parsed) {
        char range[96];
        std::snprintf(range, sizeof range, "a number in (%g, %g]", low, high);
        return outOfRange(name, range, *text);
    }
    out = *parsed;
    return std::nullopt;
}

}  // namespace mario::cli
