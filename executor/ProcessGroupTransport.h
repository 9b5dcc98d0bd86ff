#pragma once
// The Transport between processes, on PyTorch's process groups (CommGroups.h): Gloo for CPU
// processes, NCCL for GPUs; the same code for both.
//
// SEND/RECV are c10d point-to-point ops on the world group. NCCL matches them by order on a pair
// of ranks, not by tag, so receives are posted in the sender's order (LinkBook.h) and early ones
// wait until the program takes them; Gloo gets the same order, and each message's own tag on top.
// A send returns at once; its work is kept until finishIteration waits for it.
// REDUCE_GRAD is one all-reduce of the slice's gradients, flattened, on a group of just the
// ranks holding the slice (made once, in the same order on every rank): contribute starts it,
// collect waits for it. Ring all-reduce leaves the same bits on every member.
//
// Failure: a peer that dies fails the ops pending on it at once (Gloo's connection closes); the
// rank that sees it posts its line to the store (RankStore::postFailure), and a watcher thread on
// every rank polls the store and aborts this rank's pending receives, so ranks that were waiting
// on someone else end within a poll and all report the first failure. A peer that dies without
// closing anything (a hung process, or any peer under NCCL) is found by its heartbeat.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "executor/C10d.h"
#include "executor/Heartbeat.h"
#include "executor/LinkBook.h"
#include "executor/LinkOrder.h"
#include "executor/RankStore.h"
#include "executor/Transport.h"

namespace mario::exec {

struct GroupTransportSetup {
    int rank = 0;
    int device = 0;                               // this rank's pipeline device
    std::function<int(int device)> rankOfDevice;  // ranks of the pipeline devices of this replica
    const PipelineTopology* topology = nullptr;
    const LinkOrder* links = nullptr;
    CommGroupPtr world;
    std::map<std::string, CommGroupPtr> reduceGroups;  // this rank's groups with other members
    std::vector<std::int64_t> messageShape;            // [micro-batch size, seq, hidden]
    torch::TensorOptions messageOptions;
    double timeout_s = 30;
    // NCCL's waits only order streams; Gloo's block, so they get the receive timeout.
    bool blockingWaits = true;
    // Gloo moves a message only once its receive is posted, so waiting to post until the program
    // asks costs a round trip per message (about 1 ms each among busy processes): Gloo posts the
    // iteration's every receive at its start, holding a buffer per incoming message as the
    // mesh's eager sends did. NCCL runs a pair's sends and receives in one stream, in the order
    // posted, so it posts in program order (a receive posted early could hold up a send).
    bool postReceivesEarly = false;
    // At the end of an iteration, after its sends: waits for the device (NCCL: the GPU's work).
    std::function<void()> finishDevice;
    // When the run fails: ends every transfer of this rank's groups (NCCL's abort; Gloo's
    // receives are aborted one by one, so it has none).
    std::function<void()> abortGroups;
    // The ranks this rank exchanges tensors with, watched through their heartbeats, and how long
    // one may stay silent.
    std::vector<int> peers;
    double heartbeat_timeout_s = 5;
};

class ProcessGroupTransport final : public Transport {
public:
    // `store` posts this rank's failure; `watch` is a client of its own for the watcher thread.
    ProcessGroupTransport(GroupTransportSetup setup, RankStore& store, std::unique_ptr<RankStore> watch);
    ~ProcessGroupTransport() override;

    void send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) override;
    torch::Tensor receive(Direction direction, int stage, int microbatch, const std::string& waiter) override;
    void contribute(const ReduceGroup& group, const ParamMap& params) override;
    void collect(const ReduceGroup& group, ParamMap& params) override;
    void fail(const std::string& message) override;
    std::optional<std::string> failure() const override;
    // Waits for this iteration's sends, then starts the next iteration's bookkeeping; throws on
    // failure, and when a message arrived that no RECV took (a plan error).
    void finishIteration() override;

private:
    struct Posted {
        torch::Tensor buffer;
        WorkPtr work;
    };
    struct Sent {
        torch::Tensor source;  // alive until the op has read it
        WorkPtr work;
        std::string what;
    };
    struct Reducing {
        torch::Tensor flat;
        WorkPtr work;
    };

    // Waits for `work` (the receive timeout where waits block); throws with `what` and the cause,
    // or RunAborted when the watcher aborted it for another rank's failure.
    void await(const WorkPtr& work, const std::string& what);
    void watch();
    // Records `why` as the run's failure and ends every wait of this rank.
    void abortAll(const std::string& why);
    // Posts receives from device `from` up to `message` in link order; once for the iteration's
    // first transfer, every receive when postReceivesEarly.
    void post(int from, const LinkMessage& message);
    void postIteration();
    int peerRank(int device) const { return setup_.rankOfDevice(device); }

    GroupTransportSetup setup_;
    RankStore& store_;
    std::unique_ptr<RankStore> watchStore_;
    Heartbeat heartbeat_;
    LinkBook book_;
    std::map<LinkMessage, Posted> arrived_;  // posted, not yet taken
    std::vector<Sent> sent_;
    std::map<std::string, Reducing> reducing_;
    bool iterationPosted_ = false;

    mutable std::mutex mutex_;  // guards failure_ and waiting_ (the watcher reads both)
    std::optional<std::string> failure_;
    std::set<c10d::Work*> waiting_;
    std::atomic<bool> stop_{false};
    std::thread watcher_;
};

}  // namespace mario::exec
