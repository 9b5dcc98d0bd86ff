#include "core/model/RankLayout.h"

namespace mario {

NodeLocality nodeLocality(int pp, int dp, int tp, int gpusPerNode) {
    NodeLocality locality;
    // Degrees below 1 are the config reader's to report; here they have no layout to judge.
    if (pp < 1 || dp < 1 || tp < 1 || gpusPerNode < 1) return locality;
    auto node = [&](int device, int replica, int tpRank) {
        return rankOf({device, replica, tpRank}, tp, dp) / gpusPerNode;
    };
    // Enumerated, not derived: the world is at most a few thousand ranks, and a closed form
    // would have to restate the alignment cases (tp·dp not dividing a node) this covers.
    // Neighbours d and d + 1 chain every device of a replica together, so when they all share
    // nodes so does any other pair a scheme links: a looped chain's wrap from the last device
    // to the first, a V's turn, Chimera's reverse pipeline.
    for (int d = 0; d + 1 < pp; ++d)
        for (int r = 0; r < dp && locality.pipeline_in_node; ++r)
            for (int t = 0; t < tp && locality.pipeline_in_node; ++t)
                locality.pipeline_in_node = node(d, r, t) == node(d + 1, r, t);
    for (int d = 0; d < pp && locality.data_parallel_in_node; ++d)
        for (int t = 0; t < tp && locality.data_parallel_in_node; ++t)
            for (int r = 1; r < dp && locality.data_parallel_in_node; ++r)
                locality.data_parallel_in_node = node(d, r, t) == node(d, 0, t);
    return locality;
}

}  // namespace mario
