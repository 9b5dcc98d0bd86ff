#include "executor/dist/Frame.h"

#include <algorithm>
#include <string>
#include <vector>

#include "executor/dist/Wire.h"

namespace mario::dist {

std::array<std::byte, FrameHeader::kSize> FrameHeader::encode() const {
    std::vector<std::byte> out;
    out.reserve(kSize);
    putU32(out, kMagic);
    putU32(out, 0);
    putU64(out, payloadBytes);
    putI32(out, key.kind);
    putI32(out, key.a);
    putI32(out, key.b);
    putI32(out, key.c);
    std::array<std::byte, kSize> header{};
    std::copy(out.begin(), out.end(), header.begin());
    return header;
}

Result<FrameHeader> FrameHeader::decode(std::span<const std::byte, kSize> bytes) {
    WireReader in(bytes);
    const auto magic = in.u32();
    const auto reserved = in.u32();
    const auto size = in.u64();
    FrameHeader header;
    header.key.kind = in.i32().value_or(0);
    header.key.a = in.i32().value_or(0);
    header.key.b = in.i32().value_or(0);
    header.key.c = in.i32().value_or(0);
    if (magic != kMagic || reserved != 0u)
        return makeError("a frame header without the mesh's magic number (the stream is corrupt)");
    if (*size > kMaxPayloadBytes)
        return makeError("a frame announcing " + std::to_string(*size) +
                         " bytes, over the 16 GiB limit (the stream is corrupt)");
    header.payloadBytes = *size;
    return header;
}

}  // namespace mario::dist
