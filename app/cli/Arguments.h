#pragma once
// A small argument reader: positional arguments, `--flag`, `--option VALUE` and
// `--option=VALUE`. Unknown options are errors, so typos never pass silently.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/cli/CliError.h"

namespace mario::cli {

class Arguments {
public:
    // `withValue` and `flags` list the options this command accepts (without dashes);
    // `shortNames` maps one-letter options ("o") to long ones ("output").
    static std::optional<CliError> parse(const std::vector<std::string>& args, const std::set<std::string>& withValue,
                                         const std::set<std::string>& flags, Arguments& out,
                                         const std::map<std::string, std::string>& shortNames = {});

    const std::vector<std::string>& positional() const { return positional_; }
    bool has(const std::string& name) const { return values_.contains(name); }
    std::optional<std::string> value(const std::string& name) const;
    // Every value of an option given more than once, in order (`--vary A=… --vary B=…`);
    // value() is the last one.
    std::vector<std::string> values(const std::string& name) const;
    // An integer option in [min, max]; `out` keeps its default when the option is absent.
    // Anything else ("1e9", "12x", 2^31) is an error naming the option and the range.
    std::optional<CliError> integerIn(const std::string& name, int min, int max, int& out) const;
    // A decimal option in (low, high] ("0.25", "5"), the same way: "0", "-1", "nan", "5s" name
    // the option and the range.
    std::optional<CliError> numberIn(const std::string& name, double low, double high, double& out) const;

private:
    std::vector<std::string> positional_;
    std::map<std::string, std::string> values_;
    std::map<std::string, std::vector<std::string>> repeated_;
};

}  // namespace mario::cli
