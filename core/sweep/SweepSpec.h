#pragma once
// What a sweep runs (issue 41): a base config, one or two knobs with their values, the schemes
// and the pass sets to compare. Every combination is one point (SweepPoint.h); runSweep
// (Sweep.h) evaluates them. The parsers here read the CLI's words and are what the window's
// fields are checked with, so both refuse the same input with the same line.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/Config.h"
#include "core/passes/PassReport.h"
#include "core/sweep/SweepKnob.h"
#include "core/util/Result.h"

namespace mario {

// A sweep is refused above this many points (values × values × schemes × pass sets): about
// an hour of 8 × 32 schedules with the paper's passes at the benchmark's rate (docs/sweeps.md).
inline constexpr int kMaxSweepPoints = 20000;

struct KnobRange {
    const SweepKnob* knob = nullptr;
    std::vector<KnobValue> values;  // in the order given
};

// "KEY=V1,V2,…" or "KEY=MIN:MAX[:STEP]" (STEP defaults to 1 for integer knobs; number knobs
// need it). Errors are one line naming the part that is wrong.
Result<KnobRange> parseVary(std::string_view text);
// The values part alone, for a knob already chosen (the window's value field).
Result<std::vector<KnobValue>> parseKnobValues(const SweepKnob& knob, std::string_view text);

// A scheme to compare and its chunks: "interleaved:4". Chunks 0 means: the base config's when
// the scheme takes chunks and the base has at least 2, else 2; schemes without chunks get 1.
struct SchemeChoice {
    Scheme scheme = Scheme::OneFOneB;
    int chunks = 0;
    std::string label() const;  // "1f1b", "interleaved:2" (as parseSchemeChoices reads it)
    friend bool operator==(const SchemeChoice&, const SchemeChoice&) = default;
};
// "1f1b,chimera,interleaved:2"; names as the config's parallel.scheme.
Result<std::vector<SchemeChoice>> parseSchemeChoices(std::string_view text);

// "none;all;checkpoint,overlap": pass lists (as --passes reads them) separated by ';'.
Result<std::vector<std::vector<PassId>>> parsePassSets(std::string_view text);
std::string passSetLabel(const std::vector<PassId>& passes);  // "none", "checkpoint,overlap"

struct SweepSpec {
    Config base;                   // as read from a file or the window's settings
    std::vector<KnobRange> knobs;  // one or two
    std::vector<SchemeChoice> schemes;            // empty: the base config's scheme and chunks
    std::vector<std::vector<PassId>> pass_sets;   // empty: the base config's own passes
    int threads = 0;                              // 0: one per core
};

// The number of points, or why the spec cannot run (no knob, more than two, too many points).
Result<int> checkSweepSpec(const SweepSpec& spec);

}  // namespace mario
