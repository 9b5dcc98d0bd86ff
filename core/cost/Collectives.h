#pragma once
// NCCL-style ring collectives (docs/cost-model.md#communication): a ring of r ranks moves
// (r−1)/r of the data per rank for an all-gather or a reduce-scatter and twice that for an
// all-reduce, at the bus bandwidth of its slowest hop, plus one link latency per ring step.
#include "core/model/HardwareConfig.h"

namespace mario {

class Collectives {
public:
    explicit Collectives(const HardwareConfig& hardware);

    // Bus bandwidth in bytes per millisecond of a group of ranks: NVLink's when the group
    // stays inside a node; otherwise InfiniBand's, times the group's members per node (NCCL
    // runs one ring per member, each crossing nodes through that GPU's own port), never more
    // than NVLink's.
    double busBytesPerMs(bool insideNode, int membersPerNode) const;

    // `bytes` is the whole buffer (the gathered tensor, the reduced gradients).
    double allReduceMs(double bytes, int ranks, double busBytesPerMs) const;
    double allGatherMs(double bytes, int ranks, double busBytesPerMs) const;
    double reduceScatterMs(double bytes, int ranks, double busBytesPerMs) const {
        return allGatherMs(bytes, ranks, busBytesPerMs);
    }

private:
    HardwareConfig hw_;
};

}  // namespace mario
