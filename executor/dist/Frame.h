#pragma once
// The mesh's wire format: every message is a fixed 32-byte header followed by its payload.
//     u32 magic "MFR1" | u32 reserved (0) | u64 payload bytes | i32 kind, a, b, c
// A length prefix rather than a delimiter because payloads are raw tensor bytes; the magic
// makes a desynchronised or foreign stream fail loudly at the next header instead of being
// read as a nonsense length.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/util/Result.h"
#include "executor/dist/MessageKey.h"

namespace mario::dist {

struct FrameHeader {
    MessageKey key;
    std::uint64_t payloadBytes = 0;

    static constexpr std::size_t kSize = 32;
    static constexpr std::uint32_t kMagic = 0x3152464D;  // "MFR1" read little-endian
    // Far above any activation or gradient hand-off of a pipeline stage, far below what a
    // corrupt length would ask for: past it the reader reports corruption instead of trying
    // to allocate exabytes.
    static constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t{16} << 30;

    std::array<std::byte, kSize> encode() const;
    // The error is a phrase to follow "rank N sent ...", e.g. "a frame announcing 17179869185
    // bytes, over the 16 GiB limit (the stream is corrupt)".
    static Result<FrameHeader> decode(std::span<const std::byte, kSize> bytes);
};

}  // namespace mario::dist
