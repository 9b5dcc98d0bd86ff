#include "core/cost/Collectives.h"

#include <algorithm>
#include <cmath>

namespace mario {

namespace {

using Protocol = CollectiveChoice::Protocol;

// NCCL's tuning constants (NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults and
// ncclTopoTuneModel, read at commit 5067397, 2026-06, after v2.30.7; the same since 2.23), in
// microseconds, for GPUs joined by NVLink inside a node and by a network across nodes;
// docs/cost-model.md#communication lists them. Across nodes NCCL raises a ring's NVLink step to
// its network post overhead (getNetOverhead: 1 µs on Intel and other hosts, ×3 for Simple) when
// that is larger; on such hosts it never is, so it is left out (AMD hosts: 2 µs, the docs say).
struct ProtocolConstants {
    double base_us;         // baseLatencies[Ring][p] and [Tree][p] (equal for these protocols)
    double nvlink_ring_us;  // hwLatencies[NVLINK][RING][p]: one ring step over NVLink
    double nvlink_tree_us;  // hwLatencies[NVLINK][TREE][p]: one link of the chain inside a node
    double net_ring_us;     // hwLatencies[NET][RING][p]: one ring step across nodes
    double net_tree_us;     // hwLatencies[NET][TREE][p]: one tree level across nodes; also a ring
                            // step when every node holds one rank ("latencies are fully exposed")
    double ring_bandwidth;  // the ring's bus bandwidth refinement: LL128 ×0.92 ("120/128")
};
constexpr ProtocolConstants kSimple{8.4, 3.4, 4.0, 14.0, 14.0, 1.0};
constexpr ProtocolConstants kLl128{14.0, 1.9, 1.25, 4.0, 8.5, 0.92};

const ProtocolConstants& constantsOf(Protocol p) { return p == Protocol::Simple ? kSimple : kLl128; }

// A tree all-reduce runs at 0.92 of the bus bandwidth ("busBw * .92"); LL128 on a tree a further
// 7/9 inside one node, 120/128 across nodes.
constexpr double kTreeBandwidth = 0.92;
constexpr double kTreeLl128OneNode = 7.0 / 9.0, kTreeLl128Nodes = 120.0 / 128.0;
// An all-reduce moves its bytes twice (reduce, then broadcast): the algorithm bandwidth is half
// the bus bandwidth on a tree ("ratio *= .5"), r / (2(r − 1)) of it on a ring ("nRanks / nsteps").
constexpr double kTreeAlgorithmRatio = 0.5;
// treeCorrectionFactor: "Trees are not perfectly sticking to the model for medium sizes", a
// factor on a tree all-reduce's bandwidth by log2(bytes / 64), applied for indices 0 to 22.
constexpr int kTreeCorrections = 23;
constexpr double kTreeCorrectionSimple[kTreeCorrections] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                                            .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};
constexpr double kTreeCorrectionLl128[kTreeCorrections] = {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
                                                           .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0};
// ncclTopoGetAlgoTime: a Simple ring all-reduce across nodes pays 1.4× its latency ("Plateau
// effect of ring", SM80 and newer; 1.9 before) once each of nChannels × nRanks pieces holds
// 64 bytes. The channel count is NCCL's topology search's; we take the most it uses (MAXCHANNELS
// 64, src/include/device.h), so the plateau is charged only where it holds for any count.
constexpr double kRingPlateau = 1.4;
constexpr double kPlateauPieceBytes = 64, kMaxChannels = 64;

// NCCL's log2i: floor(log2 n), −1 for 0.
int floorLog2(double n) { return n >= 1 ? int(std::floor(std::log2(n))) : -1; }

double treeCorrection(Protocol p, double bytes) {
    const int index = floorLog2(std::floor(bytes / 64));
    if (index < 0 || index >= kTreeCorrections) return 1;
    return p == Protocol::Simple ? kTreeCorrectionSimple[index] : kTreeCorrectionLl128[index];
}

bool nothingToDo(double bytes, const CollectiveGroup& g) { return g.ranks <= 1 || bytes <= 0; }

}  // namespace

Collectives::Collectives(const HardwareConfig& hardware) : hw_(hardware) {}

double Collectives::busBytesPerMs(bool insideNode, int membersPerNode) const {
    const double nvlink = hw_.intra_node_gb_per_s * hw_.nvlink_efficiency * 1e6;
    if (insideNode) return nvlink;
    const double network = hw_.inter_node_gb_per_s * hw_.network_efficiency * 1e6 * std::max(1, membersPerNode);
    return std::min(nvlink, network);
}

double Collectives::ringMs(bool allReduce, double bytes, const CollectiveGroup& g, Protocol protocol) {
    if (nothingToDo(bytes, g)) return 0;
    const ProtocolConstants& c = constantsOf(protocol);
    const int nodes = std::max(1, g.nodes);
    // The ring visits every rank of a node before it crosses to the next: of its steps, one per
    // node boundary (two for an all-reduce) is a network hop, the rest NVLink hops.
    const double steps = allReduce ? 2.0 * (g.ranks - 1) : g.ranks - 1.0;
    const double interSteps = nodes == 1 ? 0 : (allReduce ? 2.0 : 1.0) * (nodes - 1);
    const double interHop = g.ranks == nodes ? c.net_tree_us : c.net_ring_us;
    double latencyUs = c.base_us + (steps - interSteps) * c.nvlink_ring_us + interSteps * interHop;
    if (allReduce && protocol == Protocol::Simple && nodes > 1 &&
        bytes / (kMaxChannels * g.ranks) >= kPlateauPieceBytes)
        latencyUs *= kRingPlateau;
    // (r − 1)/r of the bytes per step pass each rank, twice for an all-reduce.
    const double busBytes = steps / g.ranks * bytes;
    return latencyUs * 1e-3 + busBytes / (g.bus_bytes_per_ms * c.ring_bandwidth);
}

double Collectives::treeAllReduceMs(double bytes, const CollectiveGroup& g, Protocol protocol) {
    if (nothingToDo(bytes, g)) return 0;
    const ProtocolConstants& c = constantsOf(protocol);
    const int nodes = std::max(1, g.nodes);
    // Up the tree and down again: the chain of a node's ranks, then log2(nodes) network levels.
    const double chain = g.ranks / nodes - 1.0;
    const double latencyUs = c.base_us + 2 * (chain * c.nvlink_tree_us + floorLog2(nodes) * c.net_tree_us);
    double bandwidth = g.bus_bytes_per_ms * kTreeBandwidth;
    if (protocol == Protocol::LL128) bandwidth *= nodes == 1 ? kTreeLl128OneNode : kTreeLl128Nodes;
    bandwidth *= kTreeAlgorithmRatio * treeCorrection(protocol, bytes);
    return latencyUs * 1e-3 + bytes / bandwidth;
}

CollectiveChoice Collectives::allReduce(double bytes, const CollectiveGroup& group) const {
    CollectiveChoice best{Algorithm::Ring, Protocol::Simple, ringMs(true, bytes, group, Protocol::Simple)};
    if (nothingToDo(bytes, group)) return best;
    for (Protocol p : {Protocol::Simple, Protocol::LL128}) {
        for (Algorithm a : {Algorithm::Ring, Algorithm::Tree}) {
            const double ms = a == Algorithm::Ring ? ringMs(true, bytes, group, p) : treeAllReduceMs(bytes, group, p);
            if (ms < best.ms) best = {a, p, ms};
        }
    }
    return best;
}

CollectiveChoice Collectives::allGather(double bytes, const CollectiveGroup& group) const {
    CollectiveChoice best{Algorithm::Ring, Protocol::Simple, ringMs(false, bytes, group, Protocol::Simple)};
    const double ll128 = ringMs(false, bytes, group, Protocol::LL128);
    if (ll128 < best.ms) best = {Algorithm::Ring, Protocol::LL128, ll128};
    return best;
}

}  // namespace mario
