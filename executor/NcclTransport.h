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
// timeout, NCCL reports an error, or another process is gone or gave up (NcclSetup::peerFailure,
// the TCP mesh's liveness), so a dead peer ends the run with a message (watchdogVerdict).
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "executor/LinkOrder.h"
#include "executor/NcclSetup.h"
#include "executor/Transport.h"

namespace mario::exec {

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
