#include "executor/Heartbeat.h"

namespace mario::exec {

Heartbeat::Heartbeat(std::vector<int> peers, double timeout_s, Clock::time_point start) : timeout_s_(timeout_s) {
    for (int peer : peers) peers_[peer] = {0, start};
}

std::optional<std::string> Heartbeat::look(RankStore& store, Clock::time_point now) {
    store.beat();
    for (auto& [peer, seen] : peers_) {
        const std::int64_t beats = store.beatsOf(peer);
        if (beats != seen.beats) {
            seen = {beats, now};
            continue;
        }
        const double silent = std::chrono::duration<double>(now - seen.when).count();
        if (silent > timeout_s_)
            return "rank " + std::to_string(peer) + " stopped: no heartbeat in the run's store for " +
                   std::to_string(static_cast<int>(silent)) + " s (did it die or hang?)";
    }
    return std::nullopt;
}

}  // namespace mario::exec
