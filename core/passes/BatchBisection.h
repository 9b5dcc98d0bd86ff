#pragma once
// How prepose-forward and hide-recompute try their moves: a batch (at most one move per
// device) is applied and simulated as a whole; only when the batch loses are its halves tried
// on their own, down to single moves. Moves on different devices rarely interfere, so this
// needs far fewer simulations than trying every move alone.
#include <cstddef>
#include <iterator>
#include <vector>

#include "core/util/Result.h"

namespace mario {

// `tryMoves(moves)` applies the moves, simulates, and keeps them (true) or undoes them
// (false); `accepted(move)` records a kept move; `stopped()` ends the search early (a budget
// or a cancel), leaving whatever was kept. True when any move was kept.
template <class Move, class TryMoves, class Accepted, class Stopped>
Result<bool> tryInBisectedBatches(const std::vector<Move>& batch, TryMoves& tryMoves, Accepted& accepted,
                                  Stopped& stopped) {
    if (batch.empty() || stopped()) return false;
    Result<bool> kept = tryMoves(batch);
    if (!kept) return kept.error();
    if (*kept) {
        for (const Move& move : batch) accepted(move);
        return true;
    }
    if (batch.size() == 1) return false;
    const auto middle = batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2);
    auto first = tryInBisectedBatches(std::vector<Move>(batch.begin(), middle), tryMoves, accepted, stopped);
    if (!first) return first.error();
    auto second = tryInBisectedBatches(std::vector<Move>(middle, batch.end()), tryMoves, accepted, stopped);
    if (!second) return second.error();
    return *first || *second;
}

}  // namespace mario
