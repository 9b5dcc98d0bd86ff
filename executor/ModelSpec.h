#pragma once
// The model the executor builds: a GPT-style decoder described by a few integers, so that any
// valid plan runs on any model (`--model tiny` or `--model layers=8,hidden=32,...`).
#include <string>
#include <string_view>

#include "util/Result.h"

namespace mario::exec {

struct ModelSpec {
    int layers = 8;   // transformer blocks (embedding and head are extra, not counted)
    int hidden = 32;
    int heads = 4;
    int seq = 16;
    int vocab = 64;
};

// "tiny" or "key=value,..." with keys layers, hidden, heads, seq, vocab; unnamed keys keep the
// tiny defaults. Errors name the offending entry.
Result<ModelSpec> parseModelSpec(std::string_view text);

std::string describe(const ModelSpec& spec);

}  // namespace mario::exec
