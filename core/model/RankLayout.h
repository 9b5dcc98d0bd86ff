#pragma once
// Which pipeline device, data-parallel replica and tensor-parallel rank a process is, and which
// of the links between them stay inside a node. The order is Megatron-LM's default
// ("tp-cp-ep-dp-pp": tensor parallel fastest, pipeline slowest):
//     rank = tp_rank + tp * (dp_replica + dp * pipeline_device)
// The executor reads its place from it, the launch scripts document it, and the cost model asks
// it which links are NVLink and which InfiniBand, so a simulated plan is costed on the very
// layout its exported launch runs. Nodes hold consecutive ranks, gpus_per_node each.
#include <stdexcept>
#include <string>

namespace mario {

struct RankPlace {
    int device = 0;   // pipeline device (stage group), slowest-varying
    int replica = 0;  // data-parallel replica
    int tp_rank = 0;  // tensor-parallel rank, fastest-varying

    bool operator==(const RankPlace&) const = default;
};

namespace detail {
// tp and dp come from a validated plan; a zero here is a caller bug, and dividing by it would be
// undefined behaviour rather than a message, so say so loudly.
inline void checkDegrees(int tp, int dp) {
    if (tp < 1 || dp < 1)
        throw std::invalid_argument("rank layout needs tp >= 1 and dp >= 1, got tp=" + std::to_string(tp) +
                                    " dp=" + std::to_string(dp));
}
}  // namespace detail

inline RankPlace placeOf(int rank, int tp, int dp) {
    detail::checkDegrees(tp, dp);
    return RankPlace{rank / (tp * dp), (rank / tp) % dp, rank % tp};
}

inline int rankOf(RankPlace place, int tp, int dp) {
    detail::checkDegrees(tp, dp);
    return place.tp_rank + tp * (place.replica + dp * place.device);
}

// Where the job's communication runs, for `pp` pipeline devices of `tp × dp` ranks each.
struct NodeLocality {
    // Every point-to-point hop between pipeline stages (on every replica and tensor-parallel
    // rank) joins two GPUs of one node. One hop across nodes is enough to make this false: the
    // plan has one link, and the slowest hop paces a pipeline in its steady state.
    bool pipeline_in_node = true;
    // Every data-parallel group (the replicas of one device and tensor-parallel rank, which
    // all-reduce gradients together) lies within one node.
    bool data_parallel_in_node = true;
};

NodeLocality nodeLocality(int pp, int dp, int tp, int gpusPerNode);

}  // namespace mario
