#pragma once
// Training tokens from a file instead of synthetic ones: nanoGPT's `.bin` (little-endian uint16
// ids, e.g. its prepared shakespeare_char/train.bin) or, for any other extension, text with
// whitespace-separated non-negative integers. Torch-free, so the CLI and tests can use it.
#include <cstdint>
#include <string>
#include <vector>

#include "core/util/Result.h"

namespace mario::exec {

struct TokenFile {
    std::string path;
    std::vector<std::int64_t> ids;
    std::int64_t max_id = -1;  // the largest id, to suggest a vocabulary that fits them all

    // seq + 1 consecutive ids for sample `index` (inputs are [0, seq), targets [1, seq + 1)),
    // starting at offset (index · (seq + 1)) mod (n − seq): consecutive samples tile the file
    // and any index, negative or huge, wraps. Errors: the file has fewer than seq + 1 tokens, or
    // a returned id is not below `vocab` (the message gives its 0-based position in the file).
    Result<std::vector<std::int64_t>> sample(std::int64_t index, int seq, int vocab) const;
};

// Errors are one line naming the file and what is wrong where: unreadable, an odd byte count
// (.bin), a word that is not an integer or is negative (text, with its 1-based line), no tokens.
Result<TokenFile> readTokenFile(const std::string& path);

}  // namespace mario::exec
