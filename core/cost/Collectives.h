#pragma once
// NCCL's collectives as NCCL's own tuning model prices and picks them
// (docs/cost-model.md#communication; NVIDIA/nccl src/graph/tuning.cc): each algorithm and
// protocol a collective may run with costs a latency (a base plus one hop latency per step,
// NVLink's inside a node, the network's across) plus its bytes at that algorithm's bandwidth,
// and NCCL runs the fastest. An all-reduce may run on a ring (2(r−1) steps, (r−1)/r of the bytes
// twice) or on NCCL's double binary tree (a chain inside each node, a tree of depth log2(nodes)
// across them: latency that grows with log2(nodes), not with ranks, at 0.92 of the ring's
// bandwidth); a reduce-scatter or an all-gather only on a ring (NCCL runs trees for all-reduce
// alone). Protocols: Simple and LL128 (LL, half the bandwidth, only wins below our sizes).
// Not modelled (docs/cost-model.md#communication says why): NVLS, CollNet, PAT, and NCCL's
// per-channel bandwidth caps, which need its channel count.
#include "core/model/HardwareConfig.h"

namespace mario {

// The ranks of one collective and where they sit.
struct CollectiveGroup {
    int ranks = 1;
    int nodes = 1;                // the ranks spread evenly over them (NCCL's ranks per node)
    double bus_bytes_per_ms = 0;  // the group's ring bus bandwidth (Collectives::busBytesPerMs)
};

// The algorithm and protocol NCCL's model picks for a collective, and the time it predicts.
struct CollectiveChoice {
    enum class Algorithm { Ring, Tree };
    enum class Protocol { Simple, LL128 };
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
    double ms = 0;
};

class Collectives {
public:
    using Algorithm = CollectiveChoice::Algorithm;
    using Protocol = CollectiveChoice::Protocol;

    explicit Collectives(const HardwareConfig& hardware);

    // Bus bandwidth in bytes per millisecond of a group of ranks: NVLink's when the group
    // stays inside a node; otherwise InfiniBand's, times the group's members per node (NCCL
    // runs one ring per member, each crossing nodes through that GPU's own port), never more
    // than NVLink's.
    double busBytesPerMs(bool insideNode, int membersPerNode) const;

    // NCCL's pick for `bytes`, the whole buffer (the reduced gradients, the gathered tensor);
    // nothing to do (0 ms) for one rank or no bytes.
    CollectiveChoice allReduce(double bytes, const CollectiveGroup& group) const;
    CollectiveChoice allGather(double bytes, const CollectiveGroup& group) const;
    CollectiveChoice reduceScatter(double bytes, const CollectiveGroup& group) const {
        return allGather(bytes, group);  // the same ring steps and bytes, in the other direction
    }
    double allReduceMs(double bytes, const CollectiveGroup& group) const { return allReduce(bytes, group).ms; }
    double allGatherMs(double bytes, const CollectiveGroup& group) const { return allGather(bytes, group).ms; }
    double reduceScatterMs(double bytes, const CollectiveGroup& group) const { return allGatherMs(bytes, group); }

    // One algorithm and protocol as NCCL's model prices it, chosen or not.
    static double ringMs(bool allReduce, double bytes, const CollectiveGroup& group, Protocol protocol);
    static double treeAllReduceMs(double bytes, const CollectiveGroup& group, Protocol protocol);

private:
    HardwareConfig hw_;
};

}  // namespace mario
