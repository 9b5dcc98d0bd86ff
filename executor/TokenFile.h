#pragma once
// Training tokens from a file instead of synthetic ones: nanoGPT's `.bin` (little-endian uint16
// ids, e.g. its prepared shakespeare_char/train.bin) or, for any other extension, text with
// whitespace-separated non-negative integers. Torch-free, so the CLI and tests can use it.
//
// Read through core's one bounded reader (core/io/TextFile.h): a regular file up to the file
// limit (256 MiB, docs/limits.md), refused before it is read; a pipe or device (/dev/zero,
// /dev/urandom, `--tokens <(...)`) only up to the bytes the run can use, refused when more comes,
// so it never reads gigabytes. The CLI reads the file once and hands it to the run
// (ExecutorOptions::tokens), so a pipe is not read a second time.
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/Limits.h"
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

    // Whether samples 0 .. count-1 (every sample a run of `count` sequences reads) exist and fit
    // the vocabulary: sample()'s first error, found before the run starts (bad input, exit 2).
    Result<bool> checkSamples(std::int64_t count, int seq, int vocab) const;
};

// The bytes a run that reads `tokens` token ids can use from the file at `path`: two a token in a
// .bin, 24 in text (an id's up to 20 digits and the whitespace around it), rounded up to whole
// MiB and at most the file limit. What a pipe or device is read up to.
std::int64_t tokenStreamBytes(const std::string& path, std::int64_t tokens);

// Errors are one line naming the file and what is wrong where: unreadable, an odd byte count
// (.bin), a word that is not an integer or is negative (text, with its 1-based line), no tokens,
// a regular file above the file limit, or more than `streamBytes` from a pipe or device.
Result<TokenFile> readTokenFile(const std::string& path, std::int64_t streamBytes = limits::kMaxFileBytes);

}  // namespace mario::exec
