#pragma once
// A device's memory levels (sim/ProgramMemory.h: dynamic bytes after each instruction) with the
// peak of every block of 16 beside them, so that the peak over a window — "does this R's extra
// activations fit from its F to where it stands" — costs O(window / 16 + 32) instead of a scan
// of the window. Hide asks it for every candidate R in every round, and on interleaved plans a
// window spans much of the program: the scans were a fifth of hide's time (issue 45).
// The levels themselves change exactly as the callers changed them before (one addition per
// instruction, in the same order), and a block's peak is the largest of its levels, so every
// peak is the one a scan gives, to the last bit.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace mario {

class WindowPeaks {
public:
    WindowPeaks() = default;
    explicit WindowPeaks(std::vector<double> levels) : levels_(std::move(levels)) { refresh(0, levels_.size()); }

    const std::vector<double>& levels() const { return levels_; }
    double level(std::size_t i) const { return levels_[i]; }

    // The largest level in [first, last); first < last.
    double peak(std::size_t first, std::size_t last) const {
        const std::size_t firstBlock = (first + kBlock - 1) / kBlock, lastBlock = last / kBlock;
        if (firstBlock >= lastBlock) return *std::max_element(levels_.begin() + first, levels_.begin() + last);
        double best = *std::max_element(blockPeaks_.begin() + firstBlock, blockPeaks_.begin() + lastBlock);
        for (std::size_t i = first; i < firstBlock * kBlock; ++i) best = std::max(best, levels_[i]);
        for (std::size_t i = lastBlock * kBlock; i < last; ++i) best = std::max(best, levels_[i]);
        return best;
    }

    // levels[i] += extra for i in [first, last).
    void add(std::size_t first, std::size_t last, double extra) {
        for (std::size_t i = first; i < last; ++i) levels_[i] += extra;
        refresh(first, last);
    }

    // For edits of the caller's own: change levels through `edit`, then refresh what changed.
    std::vector<double>& edit() { return levels_; }
    // The block peaks over [first, last) again, after edit().
    void refresh(std::size_t first, std::size_t last) {
        blockPeaks_.resize((levels_.size() + kBlock - 1) / kBlock);
        if (first >= last) return;
        for (std::size_t b = first / kBlock; b * kBlock < last && b < blockPeaks_.size(); ++b) {
            const std::size_t end = std::min(levels_.size(), (b + 1) * kBlock);
            blockPeaks_[b] = *std::max_element(levels_.begin() + b * kBlock, levels_.begin() + end);
        }
    }

private:
    static constexpr std::size_t kBlock = 16;
    std::vector<double> levels_;
    std::vector<double> blockPeaks_;  // per block of kBlock levels (the last one may be shorter)
};

}  // namespace mario
