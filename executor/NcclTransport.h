#pragma once
// The Transport between processes on CUDA GPUs: NCCL send/recv for activations and gradients,
// NCCL all-reduce for REDUCE_GRAD. Built only when nvcc and NCCL are found (MARIO_HAVE_NCCL).
//
// Streams: torch computes on the default stream; every communicator gets its own non-blocking
// stream, bridged with events, so transfers overlap compute as docs/execution-model.md assumes.
// Communicators: one per directed pipeline link (a link's messages then match by order, see
// LinkOrder.h) and one per REDUCE_GRAD group, so that two devices reducing two groups in
// opposite program orders (Chimera) never wait on each other inside one stream.
// Hangs: a watchdog aborts every communicator when a transfer has not finished within the
// timeout or a peer process is gone, so a dead peer ends the run with a message.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "executor/LinkOrder.h"
#include "executor/Transport.h"

namespace mario::exec {

struct NcclSetup {
    int rank = 0;
    int device = 0;                               // this rank's pipeline device
    std::function<int(int device)> rankOfDevice;  // ranks of the pipeline devices of this replica
    const PipelineTopology* topology = nullptr;
    const LinkOrder* links = nullptr;
    // Every REDUCE_GRAD group of the run and its ranks in ascending order, listed identically on
    // every rank (communicators are created collectively, in this order).
    std::vector<std::pair<std::string, std::vector<int>>> reduceGroups;
    // Every replica's links, identically on every rank: (ranks of from, to) per communicator.
    std::vector<std::pair<int, int>> linkRanks;
    std::vector<std::int64_t> messageShape;  // [micro-batch size, seq, hidden]
    int cudaDevice = 0;                      // LOCAL_RANK
    int dtype = 0;                           // a torch::ScalarType
    double timeout_s = 30;
    // Rank 0's bytes on every rank (the TCP mesh): carries NCCL's unique ids.
    std::function<std::vector<std::byte>(std::vector<std::byte>)> broadcast;
    // Polled by the watchdog: a message when another process is known to have failed.
    std::function<std::optional<std::string>()> peerFailure;
};

class NcclTransport final : public Transport {
public:
    // Whether this build has the NCCL backend at all.
    static bool built();
    // Creates this rank's communicators (collective over all ranks). Throws with a one-line
    // reason (no CUDA in this LibTorch, NCCL error, ...).
    static std::unique_ptr<NcclTransport> create(const NcclSetup& setup);
    ~NcclTransport() override;

    void send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) override;
    torch::Tensor receive(Direction direction, int stage, int microbatch, const std::string& waiter) override;
    void contribute(const ReduceGroup& group, const ParamMap& params) override;
    void collect(const ReduceGroup& group, ParamMap& params) override;
    void fail(const std::string& message) override;

    // Waits until every queued transfer has finished, then forgets which messages were sent and
    // received (every iteration sends them again). Throws on failure, and when a message arrived
    // but no RECV took it (a plan error).
    void finishIteration() override;
    std::optional<std::string> failure() const override;

    struct Impl;

private:
    explicit NcclTransport(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace mario::exec
