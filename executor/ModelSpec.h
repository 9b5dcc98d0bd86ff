#pragma once
// The model the executor builds: a decoder described by a few integers and a flavour, so that
// any valid plan runs on any model (`--model tiny`, `--model tiny-llama,layers=4` or
// `--model layers=8,hidden=32,...`).
#include <string>
#include <string_view>

#include "core/util/Result.h"

namespace mario::exec {

struct ModelSpec {
    int layers = 8;  // transformer blocks (embedding and head are extra, not counted)
    int hidden = 32;
    int heads = 4;
    int seq = 16;
    int vocab = 64;
    // "gpt": LayerNorm, learned positions, GELU MLP, biases. "llama": RMSNorm, rotary
    // positions, SwiGLU MLP, no biases (GptModel.cpp).
    std::string flavor = "gpt";
};

// The part of the model a stage holds: blocks [begin, end), plus the embedding on the first
// stage of a chain and final norm + LM head + loss on the last. Here rather than beside the
// model (GptModel.h) so that Torch-free code (StageSlices.h, the memory estimate) can name it.
struct LayerSlice {
    int begin = 0;
    int end = 0;
    bool embedding = false;
    bool head = false;

    std::string key() const {
        return std::to_string(begin) + ":" + std::to_string(end) + (embedding ? "E" : "") + (head ? "H" : "");
    }
};

// An optional preset word first ("tiny" or "tiny-llama"), then "key=value,..." overrides with
// keys layers, hidden, heads, seq, vocab, flavor (or flavour); unnamed keys keep the tiny
// defaults. Errors name the offending entry.
Result<ModelSpec> parseModelSpec(std::string_view text);

// parseModelSpec reads it back; the gpt flavour is implied, so gpt descriptions are unchanged.
std::string describe(const ModelSpec& spec);

// LLaMA's SwiGLU width: 2/3 of the usual 4·hidden (three matrices instead of two keep the
// parameter count), truncated and then rounded up to a multiple of 8 as LLaMA's reference code
// does with its `multiple_of` (256 there; 8 suits these small models).
int llamaFfnSize(int hidden);

}  // namespace mario::exec
