#pragma once
// A first pass over a JSON text that builds nothing. It finds the first error with its byte
// position, which nlohmann's DOM parser drops for a number beyond double ("1e999"), and adds up
// what nlohmann::json would allocate to hold the document, so that a text whose parsed form
// would pass a memory budget is refused before any of it is built. The parsed form is what
// costs memory: a plan padded with 64 MiB of empty objects under an ignored key took 2.1 GB,
// 33 bytes per byte of file, and 250 MiB passed 6 GB (issue 30).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mario {

struct JsonScan {
    // What the parsed document allocates, as estimated below; when the scan stopped at the
    // budget, what it had counted by then (just above the budget).
    std::uint64_t bytes = 0;
    std::uint64_t values = 0;  // every value, containers included
    bool over_budget = false;  // stopped: the document needs more than the budget
    // The first error: its 1-based byte offset, just past the offending character (0: none),
    // and what nlohmann says is wrong (its what(), with the exception's id).
    std::size_t error_byte = 0;
    std::string error;
};

// A text of at most budget / kScanFreeRatio bytes cannot pass the budget, so readJsonFile parses
// it without the scan (and scans only to word an error): by the rules below the densest texts
// cost a few dozen bytes a byte (nested empty arrays, empty objects in an array), several times
// under this ratio (json_scan_test checks them).
inline constexpr std::int64_t kScanFreeRatio = 256;

// Scans `text` as readJsonFile parses it (comments allowed) and stops at the first error or
// when the estimate passes `budgetBytes`.
//
// The estimate is what libstdc++ and glibc's malloc spend for nlohmann::json 3.x on 64 bits,
// each allocation rounded up to glibc's chunk (its size plus 8, to 16 bytes, at least 32):
//   - every value: its 16-byte json in its parent (an array's buffer, a member's node);
//   - an object: its std::map, 48 bytes (a 64-byte chunk), and per member a tree node of
//     80 bytes (96) plus the key's own buffer when it passes 15 bytes (the string's SSO);
//   - an array: its std::vector, 24 bytes (32), and its buffer grown by doubling: the next
//     power of two of its size times 16 bytes;
//   - a string: its std::string, 32 bytes (48), plus its buffer when it passes 15 bytes;
//   - a number, true, false, null: nothing beyond the 16 bytes;
//   - while parsing, 8 bytes per level of nesting (the parser's stack of open containers).
// Measured against peak RSS by tests/bench/json_memory.sh.
JsonScan scanJson(std::string_view text, std::uint64_t budgetBytes);

}  // namespace mario
