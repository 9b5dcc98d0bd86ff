#pragma once
// The key-value store every rank of a multi-process run shares: PyTorch's c10d::TCPStore, the
// store torchrun's rendezvous and every torch.distributed job use. It carries what the ranks must
// agree on before and after the run (the plan they run, the GPUs they run on, each step's
// numbers, the reference check's tensors) and the run's first failure; tensors between stages
// go through process groups (ProcessGroupTransport.h), which meet through it too.
//
// Opening follows torch.distributed's env:// rendezvous: under torchrun's agent store
// (TORCHELASTIC_USE_AGENT_STORE=True) every rank joins the agent's store at
// MASTER_ADDR:MASTER_PORT as a client, its keys under /worker/attempt_<TORCHELASTIC_RESTART_COUNT>;
// otherwise rank 0 hosts the store on MASTER_PORT and waits for all WORLD_SIZE ranks to join.
// No port besides MASTER_PORT is used.
//
// Failure: every rank that gives up posts its line with postFailure; the first one posted wins
// and every rank reports that one, so a world names the rank that failed first, not the
// neighbour that went quiet after it.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/C10d.h"
#include "executor/LaunchEnv.h"

namespace mario::exec {

class RankStore {
public:
    // Joins (or, on rank 0 without an agent store, hosts) the run's store within timeout_s.
    // Throws std::runtime_error with one line naming the address and what went wrong.
    static std::unique_ptr<RankStore> open(const LaunchEnv& env, double timeout_s);
    ~RankStore();

    // A second client of the same store, for a thread of its own (a client is one connection).
    std::unique_ptr<RankStore> connectAgain() const;

    int rank() const { return env_.rank; }
    int worldSize() const { return env_.world_size; }
    // The run's keys, for process groups to meet under (their own prefix inside it).
    StorePtr scoped(const std::string& prefix) const;

    // Every rank's `mine` in rank order, on every rank. `name` must be new to the run.
    std::vector<std::string> allGather(const std::string& name, const std::string& mine);
    // Rank 0 gets every rank's bytes in rank order; the others get an empty list.
    std::vector<std::vector<std::uint8_t>> gather(const std::string& name, std::vector<std::uint8_t> mine);
    // Returns once every rank has called it with this `name`.
    void barrier(const std::string& name);

    // Posts `why` unless another failure was posted first; returns the one that stands.
    std::string postFailure(const std::string& why);
    // The failure posted so far, without waiting; nullopt while every rank is well.
    std::optional<std::string> postedFailure();

    // This rank's heartbeat counter, one up (Heartbeat.h); and rank `rank`'s, as it stands.
    void beat();
    std::int64_t beatsOf(int rank);

    // Called last on every rank, whether its run ended well or not: the host (rank 0 without an
    // agent store) waits up to `patience_s` until every other rank has said so, since its exit
    // takes the store down with it (a rank still reading the store would report that instead of
    // the run's failure). Never throws: a store already gone has nobody left to wait for.
    void leave(double patience_s);

private:
    // The value of `key`, waiting for it up to the store's timeout; throws naming the key.
    std::vector<std::uint8_t> read(const std::string& key);

    RankStore(LaunchEnv env, double timeout_s, c10::intrusive_ptr<c10d::TCPStore> tcp, StorePtr keys);

    LaunchEnv env_;
    double timeout_s_;
    c10::intrusive_ptr<c10d::TCPStore> tcp_;
    StorePtr keys_;  // tcp_ under this run's prefix
};

}  // namespace mario::exec
