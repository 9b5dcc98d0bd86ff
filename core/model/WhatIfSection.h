#pragma once
// The window's What-if settings as a config file keeps them (the optional "what_if" section,
// docs/config-format.md): text in the words of `mario sweep` (--vary KEY=VALUES, --schemes,
// --passes), read back as typed. They describe a sweep to run, never the schedule itself, so
// scheduleFingerprint leaves them out and `mario simulate` ignores them.
#include <string>

namespace mario {

struct WhatIfSection {
    std::string knob;     // a --vary key, e.g. "parallel.micro_batch_size"
    std::string values;   // its values as --vary reads them, e.g. "1,2,4,8"
    std::string knob2;    // empty: one knob
    std::string values2;
    std::string schemes;  // empty: the config's own scheme
    std::string passes;   // pass sets separated by ';', e.g. "none;all"
    std::string metric = "throughput";  // the top chart: "throughput" or "step"
    friend bool operator==(const WhatIfSection&, const WhatIfSection&) = default;
};

}  // namespace mario
