#pragma once
// Which model layers a pipeline stage holds, and whether it also holds the embedding (first
// stage of a chain) or the LM head and loss (last stage of a chain).
#include <vector>

namespace mario {

struct StageLayout {
    int begin_layer = 0;  // [begin_layer, end_layer) transformer blocks
    int end_layer = 0;
    bool has_embedding = false;
    bool has_head = false;

    int layerCount() const { return end_layer - begin_layer; }
};

// One chain's even split of `layers` blocks over `stages` stages, in chain order.
// When the split is uneven the extra blocks go to the middle stages, never to the ends: in
// 1F1B-like schemes the first stage already holds the most in-flight activations and the
// last one the LM head, so an extra block on either end would set the pipeline's pace and
// its peak memory. Example: 26 layers on 8 stages -> 3 3 3 4 4 3 3 3.
// Chimera uses this once per direction (both chains hold the whole model); interleaved uses
// it over pp * chunks stages. Returns an empty vector when stages < 1.
inline std::vector<StageLayout> evenLayout(int layers, int stages) {
    std::vector<StageLayout> out;
    if (stages < 1 || layers < 0) return out;
    int base = layers / stages;
    int extra = layers % stages;
    int firstExtra = (stages - extra) / 2;  // extra stages are [firstExtra, firstExtra + extra)
    int begin = 0;
    for (int s = 0; s < stages; ++s) {
        int count = base + (s >= firstExtra && s < firstExtra + extra ? 1 : 0);
        out.push_back({begin, begin + count, s == 0, s == stages - 1});
        begin += count;
    }
    return out;
}

}  // namespace mario
