#pragma once
// A transformer model's shape, as the cost model needs it.
#include <string>

namespace mario {

struct ModelConfig {
    std::string name;
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0;    // 0 means heads (no grouped-query attention)
    int ffn_hidden = 0;  // 0 means 4 * hidden
    int vocab = 0;
    int sequence_length = 0;
    bool gated_mlp = false;        // SwiGLU (LLaMA) uses three FFN matrices instead of two
    bool tied_embeddings = false;  // GPT-3 ties input and output embeddings

    int kvHeads() const { return kv_heads > 0 ? kv_heads : heads; }
    int ffnHidden() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
};

}  // namespace mario
