#pragma once
// Whether the other ranks of a run are still alive, for a run whose tensors do not travel on the
// TCP mesh: the CUDA backend moves them with NCCL, which never notices on its own that a peer
// process died; its kernels just wait. The mesh does notice: a dead process's sockets close, and
// a rank that gives up sends every peer its reason (TcpMesh::reportFailure). PeerWatch turns that
// into the poll NCCL's watchdog asks (NcclSetup::peerFailure), so a rank that dies ends the others
// within the watchdog's period, as a dead peer ends a TCP run's waits at once.
//
// Armed while the run's transfers go on. After its last transfer a rank disarms it: from then
// on peers close their connections because they finished, not because they died.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "executor/dist/TcpMesh.h"

namespace mario::dist {

class PeerWatch {
public:
    // `mesh` must outlive the watch and every hook it hands out.
    explicit PeerWatch(const TcpMesh& mesh);

    // While armed: why the run cannot go on (the first failing rank's own line, or "rank 2
    // closed its connection (did it die?)"); nullopt while every peer is well.
    std::optional<std::string> failure() const;
    // The same poll as a function, for a transport's watchdog thread.
    std::function<std::optional<std::string>()> hook() const;
    // The transfers are over: failure() is nullopt from now on.
    void disarm() { armed_->store(false); }

private:
    const TcpMesh& mesh_;
    std::shared_ptr<std::atomic<bool>> armed_ = std::make_shared<std::atomic<bool>>(true);
};

}  // namespace mario::dist
