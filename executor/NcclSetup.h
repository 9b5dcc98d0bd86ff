#pragma once
// What NcclTransport (the CUDA backend between processes) is built from, and what its watchdog
// decides. Torch-free and NCCL-free, so the runner's wiring and the watchdog's decision are
// built and tested on every machine (tests/executor/nccl_setup_test.cpp), not only where NCCL
// and a GPU are: the transport itself cannot run without them.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "executor/LinkOrder.h"
#include "executor/dist/PeerWatch.h"
#include "executor/dist/TcpMesh.h"

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
    // Every rank passes the GPU it runs on ("host/PCI bus id"); every rank gets back the same
    // answer: why the ranks cannot form communicators (sharedGpuProblem), or nullopt.
    std::function<std::optional<std::string>(const std::string& gpu)> checkGpus;
};

// Two ranks on one GPU: NCCL refuses them with only "invalid usage" (seen on an H200, issue 33),
// so the ranks compare their GPUs first. `gpuOfRank[r]` is rank r's "host/PCI bus id".
std::optional<std::string> sharedGpuProblem(const std::vector<std::string>& gpuOfRank);

// What the runner knows when it sets up NCCL for this rank.
struct NcclRankInputs {
    int rank = 0;
    int device = 0;  // this rank's pipeline device
    int replicas = 1;
    int localRank = 0;
    const PipelineTopology* topology = nullptr;
    const LinkOrder* links = nullptr;
    const std::map<std::string, std::vector<int>>* groups = nullptr;  // REDUCE_GRAD group → ranks
    std::vector<std::int64_t> messageShape;
    int dtype = 0;
    double timeout_s = 30;
};

// The setup of this rank: its communicators' ranks in Megatron's order (RankLayout.h), NCCL's ids
// broadcast over `mesh`, and the watchdog's peer failures from `watch`, the mesh's liveness (a
// rank that dies or gives up ends the others' NCCL waits, as it ends a TCP run's).
NcclSetup makeNcclSetup(const NcclRankInputs& inputs, dist::TcpMesh& mesh, const dist::PeerWatch& watch);

// What the watchdog sees in one look at this rank's transfers.
struct WatchdogObservation {
    int rank = 0;
    double timeout_s = 30;
    std::optional<double> oldestInFlight_s;  // age of the oldest unfinished transfer
    std::string oldestWhat;                  // "sending the activation for stage 1 micro-batch 0 to device 1"
    std::optional<std::string> ncclError;    // an asynchronous error of one of its communicators
    std::optional<std::string> peerFailure;  // NcclSetup::peerFailure's answer
};

// Why every communicator must be aborted now, or nullopt. A peer's failure comes first: it is the
// cause, and the transfer that times out later, or the error NCCL reports, only its echo.
std::optional<std::string> watchdogVerdict(const WatchdogObservation& seen);

}  // namespace mario::exec
