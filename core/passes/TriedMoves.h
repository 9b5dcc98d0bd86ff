#pragma once
// The moves a pass has tried, so that none is tried twice: (device, stage, micro-batch, place).
// Hide and prepose ask it once per candidate on every scan, hundreds of thousands of times on a
// 32 × 128 plan; a node-based std::unordered_set (or std::set) spent a tenth of hide's time
// allocating and chasing its nodes (issue 45). One flat table with linear probing instead: a
// set, so the passes' results are those of any other set.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mario {

class TriedMoves {
public:
    // True when (device, stage, microbatch, at) was not there before (and now is).
    bool insert(int device, int stage, int microbatch, std::uint64_t at) {
        if (2 * (size_ + 1) > slots_.size()) grow();
        const Key key{device, stage, microbatch, at};
        if (!place(key)) return false;
        ++size_;
        return true;
    }
    std::size_t size() const { return size_; }

private:
    struct Key {
        int device = -1;  // -1: an empty slot (devices are numbered from 0)
        int stage = 0, microbatch = 0;
        std::uint64_t at = 0;
        bool operator==(const Key&) const = default;
    };

    static std::uint64_t hash(const Key& k) {
        std::uint64_t h = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.device)) << 32) ^
                          static_cast<std::uint32_t>(k.stage);
        h = h * 0x9E3779B97F4A7C15ull ^ ((static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.microbatch)) << 32) |
                                         (static_cast<std::uint32_t>(k.at) ^ static_cast<std::uint32_t>(k.at >> 32)));
        h ^= k.at * 0xC2B2AE3D27D4EB4Full;
        // MurmurHash3's finaliser: every bit of the key reaches the low bits the mask keeps.
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDull;
        h ^= h >> 33;
        h *= 0xC4CEB9FE1A85EC53ull;
        h ^= h >> 33;
        return h;
    }

    // Stores `key` unless it is there; false when it was.
    bool place(const Key& key) {
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
            Key& slot = slots_[i];
            if (slot.device < 0) {
                slot = key;
                return true;
            }
            if (slot == key) return false;
        }
    }

    void grow() {
        std::vector<Key> old = std::move(slots_);
        slots_.assign(old.empty() ? 64 : 2 * old.size(), Key{});
        for (const Key& key : old)
            if (key.device >= 0) place(key);
    }

    std::vector<Key> slots_;
    std::size_t size_ = 0;
};

}  // namespace mario
