#pragma once
// What a sweep may vary: the knobs, each named by the config key users already write in a
// *.config.json (docs/config-format.md), so `--vary parallel.micro_batch_size=1,2,4` edits the
// same field a hand edit of the file would. The table in SweepKnob.cpp is the one list: the
// CLI's --help, the error for an unknown key and the window's knob picker all read it.
#include <string>
#include <string_view>
#include <vector>

#include "core/util/Result.h"

namespace mario {

struct SweepKnob {
    enum class Kind { Integer, Number, Word };
    std::string_view key;  // the config's JSON path: "parallel.micro_batch_size"
    Kind kind = Kind::Integer;
    // Larger values need more memory on some device, so `mario capacity` may grow it.
    bool grows_memory = false;
    std::string_view words;  // Word knobs: the accepted values, "flash|materialized|eager"
    double limit = 0;        // the largest value the config reader accepts (core/model/Limits.h)
    std::string_view about;  // one line for --help and tooltips
};

// A knob's value: a number, or one of a Word knob's words.
struct KnobValue {
    double number = 0;
    std::string word;  // non-empty for Word knobs
    bool isWord() const { return !word.empty(); }
    std::string text() const;  // "4", "0.5", "flash"
    friend bool operator==(const KnobValue&, const KnobValue&) = default;
};

// Every knob, in the order --help lists them.
const std::vector<SweepKnob>& sweepKnobs();

// By its full key ("parallel.micro_batch_size") or its last part when that is unique
// ("micro_batch_size"). The error is one line naming the key and listing the valid ones.
Result<const SweepKnob*> findKnob(std::string_view name);

// "parallel.micro_batch_size, parallel.global_batch_size, …" (only those that grow memory when
// `growing`).
std::string knobKeyList(bool growing = false);

}  // namespace mario
