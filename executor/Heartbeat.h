#pragma once
// Whether the ranks this rank exchanges tensors with are still alive, through the run's store
// (RankStore.h): each rank bumps its own counter there every half second, and a peer whose counter
// has not moved for `timeout_s` is named. A process that died with its connections open to a
// wait that never ends (NCCL's kernels just wait; a stopped or hung process keeps Gloo's sockets
// open) is then found within seconds instead of at the receive timeout. Only the peers are read
// (pipeline neighbours and REDUCE_GRAD partners), so the store sees a few requests per rank per
// beat however large the world.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/RankStore.h"

namespace mario::exec {

class Heartbeat {
public:
    using Clock = std::chrono::steady_clock;

    Heartbeat(std::vector<int> peers, double timeout_s, Clock::time_point start);

    // Beats for this rank and reads the peers' counters; the line naming a peer silent for
    // longer than the timeout ("rank 2 stopped: no heartbeat in the run's store for 5 s ..."),
    // else nullopt. Store errors pass through.
    std::optional<std::string> look(RankStore& store, Clock::time_point now);

private:
    struct Seen {
        std::int64_t beats = 0;
        Clock::time_point when;
    };
    std::map<int, Seen> peers_;
    double timeout_s_;
};

}  // namespace mario::exec
