#include "core/cost/Collectives.h"

#include <algorithm>

namespace mario {

Collectives::Collectives(const HardwareConfig& hardware) : hw_(hardware) {}

double Collectives::busBytesPerMs(bool insideNode, int membersPerNode) const {
    const double nvlink = hw_.intra_node_gb_per_s * hw_.nvlink_efficiency * 1e6;
    if (insideNode) return nvlink;
    const double network = hw_.inter_node_gb_per_s * hw_.network_efficiency * 1e6 * std::max(1, membersPerNode);
    return std::min(nvlink, network);
}

double Collectives::allReduceMs(double bytes, int ranks, double busBytesPerMs) const {
    if (ranks <= 1 || bytes <= 0) return 0;
    const double steps = 2.0 * (ranks - 1);
    return steps / ranks * bytes / busBytesPerMs + steps * hw_.link_latency_ms;
}

double Collectives::allGatherMs(double bytes, int ranks, double busBytesPerMs) const {
    if (ranks <= 1 || bytes <= 0) return 0;
    const double steps = ranks - 1.0;
    return steps / ranks * bytes / busBytesPerMs + steps * hw_.link_latency_ms;
}

}  // namespace mario
