#include "core/sweep/SweepSpec.h"

#include <charconv>
#include <cmath>

#include "core/passes/PassVocabulary.h"

namespace mario {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t from = 0;
    for (;;) {
        const std::size_t to = text.find(separator, from);
        parts.push_back(text.substr(from, to == std::string_view::npos ? std::string_view::npos : to - from));
        if (to == std::string_view::npos) return parts;
        from = to + 1;
    }
}

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return text;
}

// A positive number (a whole one for integer knobs) within the knob's limit.
Result<double> readNumber(const SweepKnob& knob, std::string_view text) {
    const std::string_view word = trimmed(text);
    double value = 0;
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
    const std::string key(knob.key);
    if (word.empty() || error != std::errc{} || end != word.data() + word.size() || !std::isfinite(value))
        return makeError(key + ": \"" + std::string(word) + "\" is not a number");
    if (knob.kind == SweepKnob::Kind::Integer && value != std::floor(value))
        return makeError(key + ": \"" + std::string(word) + "\" is not a whole number");
    if (value <= 0 || value > knob.limit)
        return makeError(key + ": " + std::string(word) + " is outside (0, " + KnobValue{knob.limit, {}}.text() + "]");
    return value;
}

}  // namespace

Result<std::vector<KnobValue>> parseKnobValues(const SweepKnob& knob, std::string_view text) {
    const std::string key(knob.key);
    std::vector<KnobValue> values;
    if (knob.kind == SweepKnob::Kind::Word) {
        const std::vector<std::string_view> words = split(knob.words, '|');
        for (std::string_view part : split(text, ',')) {
            const std::string_view word = trimmed(part);
            bool known = false;
            for (std::string_view allowed : words) known = known || allowed == word;
            if (!known)
                return makeError(key + ": \"" + std::string(word) + "\" is not one of " + std::string(knob.words));
            values.push_back({0, std::string(word)});
        }
        return values;
    }
    if (text.find(':') != std::string_view::npos) {
        const std::vector<std::string_view> parts = split(text, ':');
        if (parts.size() > 3) return makeError(key + ": a range is MIN:MAX or MIN:MAX:STEP");
        auto low = readNumber(knob, parts[0]);
        if (!low) return low.error();
        auto high = readNumber(knob, parts[1]);
        if (!high) return high.error();
        if (*high < *low) return makeError(key + ": the range's MAX is below its MIN");
        double step = 1;
        if (parts.size() == 3) {
            auto read = readNumber(knob, parts[2]);
            if (!read) return makeError(key + ": STEP: " + read.error().message.substr(key.size() + 2));
            step = *read;
        } else if (knob.kind == SweepKnob::Kind::Number) {
            return makeError(key + ": a range of a number needs its STEP (MIN:MAX:STEP)");
        }
        const double count = std::floor((*high - *low) / step + 1e-9) + 1;
        if (count > kMaxSweepPoints)
            return makeError(key + ": the range holds " + KnobValue{count, {}}.text() + " values; the limit is " +
                             std::to_string(kMaxSweepPoints));
        for (int i = 0; i < static_cast<int>(count); ++i) values.push_back({*low + i * step, {}});
        return values;
    }
    for (std::string_view part : split(text, ',')) {
        auto value = readNumber(knob, part);
        if (!value) return value.error();
        values.push_back({*value, {}});
    }
    return values;
}

Result<KnobRange> parseVary(std::string_view text) {
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos)
        return makeError("\"" + std::string(text) + "\": expected KEY=V1,V2,… or KEY=MIN:MAX[:STEP]");
    auto knob = findKnob(trimmed(text.substr(0, equals)));
    if (!knob) return knob.error();
    auto values = parseKnobValues(**knob, text.substr(equals + 1));
    if (!values) return values.error();
    return KnobRange{*knob, std::move(*values)};
}

std::string SchemeChoice::label() const {
    std::string text(schemeName(scheme));
    if (chunks > 0 && schemeInfo(scheme).chunked) text += ":" + std::to_string(chunks);
    return text;
}

Result<std::vector<SchemeChoice>> parseSchemeChoices(std::string_view text) {
    std::vector<SchemeChoice> choices;
    for (std::string_view part : split(text, ',')) {
        const std::vector<std::string_view> pieces = split(trimmed(part), ':');
        const auto scheme = parseScheme(trimmed(pieces[0]));
        if (!scheme || pieces.size() > 2)
            return makeError("unknown scheme \"" + std::string(trimmed(part)) + "\" (expected " + schemeNameList() +
                             ", with :CHUNKS after " + chunkedSchemeNames() + ")");
        SchemeChoice choice{*scheme, 0};
        if (pieces.size() == 2) {
            int chunks = 0;
            const std::string_view word = trimmed(pieces[1]);
            const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), chunks);
            if (!schemeInfo(*scheme).chunked)
                return makeError("scheme \"" + std::string(trimmed(part)) + "\": only " + chunkedSchemeNames() +
                                 " take chunks");
            if (error != std::errc{} || end != word.data() + word.size() || chunks < 2)
                return makeError("scheme \"" + std::string(trimmed(part)) + "\": chunks must be a whole number >= 2");
            choice.chunks = chunks;
        }
        choices.push_back(choice);
    }
    return choices;
}

Result<std::vector<std::vector<PassId>>> parsePassSets(std::string_view text) {
    std::vector<std::vector<PassId>> sets;
    for (std::string_view part : split(text, ';')) {
        auto passes = parsePassList(trimmed(part));
        if (!passes) return makeError("pass set \"" + std::string(trimmed(part)) + "\": " + passes.error().message);
        sets.push_back(std::move(*passes));
    }
    return sets;
}

std::string passSetLabel(const std::vector<PassId>& passes) {
    if (passes == paperPasses()) return "all";
    std::string text;
    for (const std::string& name : passNames(passes)) {
        if (!text.empty()) text += ',';
        text += name;
    }
    return text.empty() ? "none" : text;
}

Result<int> checkSweepSpec(const SweepSpec& spec) {
    if (spec.knobs.empty()) return makeError("a sweep needs a knob to vary (--vary KEY=VALUES)");
    if (spec.knobs.size() > 2) return makeError("a sweep varies one or two knobs, not " + std::to_string(spec.knobs.size()));
    if (spec.knobs.size() == 2 && spec.knobs[0].knob == spec.knobs[1].knob)
        return makeError(std::string(spec.knobs[0].knob->key) + ": varied twice");
    double points = std::max<std::size_t>(1, spec.schemes.size()) * std::max<std::size_t>(1, spec.pass_sets.size());
    for (const KnobRange& range : spec.knobs) {
        if (!range.knob || range.values.empty()) return makeError("a knob to vary has no values");
        points *= static_cast<double>(range.values.size());
    }
    if (points > kMaxSweepPoints)
        return makeError("the sweep has " + KnobValue{points, {}}.text() + " points; the limit is " +
                         std::to_string(kMaxSweepPoints) + " (fewer values, schemes or pass sets)");
    return static_cast<int>(points);
}

}  // namespace mario
