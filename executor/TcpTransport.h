#pragma once
// The Transport between processes on the CPU: tensors as bytes over the TCP mesh
// (executor/dist/TcpMesh.h). It is the CPU twin of NcclTransport and lets CI run the whole
// multi-process path — rendezvous, Megatron rank order, data-parallel replicas, cross-process
// REDUCE_GRAD — without a GPU.
//
// REDUCE_GRAD: contribute sends this rank's gradients to every other member of the group and
// returns; collect waits for all of them and sums in rank order, so every member ends with
// bit-identical weights (a sum in arrival order would differ in the last bits between ranks).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "executor/Transport.h"
#include "executor/dist/TcpMesh.h"

namespace mario::exec {

class TcpTransport final : public Transport {
public:
    // `rankOfDevice` maps a pipeline device to the rank running it in this rank's replica;
    // `groupRanks` lists, per REDUCE_GRAD group key, the ranks holding the slice (ascending).
    TcpTransport(dist::TcpMesh& mesh, const PipelineTopology& topology, std::function<int(int)> rankOfDevice,
                 std::map<std::string, std::vector<int>> groupRanks, int iteration, double timeout_s);

    void send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) override;
    torch::Tensor receive(Direction direction, int stage, int microbatch, const std::string& waiter) override;
    void contribute(const ReduceGroup& group, const ParamMap& params) override;
    void collect(const ReduceGroup& group, ParamMap& params) override;
    void fail(const std::string& message) override;

    std::optional<std::string> failure() const override { return failure_; }

private:
    int groupIndex(const std::string& key) const;

    dist::TcpMesh& mesh_;
    const PipelineTopology& topology_;
    std::function<int(int)> rankOfDevice_;
    std::map<std::string, std::vector<int>> groupRanks_;
    int iteration_;
    double timeout_s_;
    std::map<std::string, ParamMap> contributed_;  // this rank's own gradients per group
    std::optional<std::string> failure_;
};

}  // namespace mario::exec
