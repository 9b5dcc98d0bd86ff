#pragma once
// Fixed-width little-endian integers for the rendezvous and frame headers. Written byte by byte
// rather than memcpy'd structs so the format does not depend on padding or on the host's byte
// order: ranks on different machines must agree on it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mario::dist {

inline void putU32(std::vector<std::byte>& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}
inline void putU64(std::vector<std::byte>& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}
inline void putI32(std::vector<std::byte>& out, std::int32_t v) { putU32(out, static_cast<std::uint32_t>(v)); }
inline void putString(std::vector<std::byte>& out, const std::string& s) {
    putU32(out, static_cast<std::uint32_t>(s.size()));
    for (char c : s) out.push_back(static_cast<std::byte>(c));
}

// Reads what the put* functions wrote. Every read is bounds-checked and returns nullopt past
// the end, so a truncated or hostile message is an error, never a read out of bounds.
class WireReader {
public:
    explicit WireReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

    std::optional<std::uint32_t> u32() {
        auto v = unsignedOf(4);
        return v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v)) : std::nullopt;
    }
    std::optional<std::uint64_t> u64() { return unsignedOf(8); }
    std::optional<std::int32_t> i32() {
        auto v = u32();
        return v ? std::optional<std::int32_t>(static_cast<std::int32_t>(*v)) : std::nullopt;
    }
    std::optional<std::string> string() {
        auto size = u32();
        if (!size || *size > bytes_.size() - at_) return std::nullopt;
        std::string s(reinterpret_cast<const char*>(bytes_.data() + at_), *size);
        at_ += *size;
        return s;
    }
    bool atEnd() const { return at_ == bytes_.size(); }

private:
    std::optional<std::uint64_t> unsignedOf(std::size_t width) {
        if (bytes_.size() - at_ < width) return std::nullopt;
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < width; ++i) v |= std::to_integer<std::uint64_t>(bytes_[at_ + i]) << (8 * i);
        at_ += width;
        return v;
    }

    std::span<const std::byte> bytes_;
    std::size_t at_ = 0;
};

}  // namespace mario::dist
