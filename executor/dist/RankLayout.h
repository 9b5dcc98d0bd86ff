#pragma once
// Which pipeline device, data-parallel replica and tensor-parallel rank a process is. The order is
// Megatron-LM's default ("tp-cp-ep-dp-pp": tensor parallel fastest, pipeline slowest), the one the
// project's launch scripts assume (core/io/LaunchExport.h):
//     rank = tp_rank + tp * (dp_replica + dp * pipeline_device)
// so tensor-parallel peers share a node and pipeline neighbours sit furthest apart. Keeping this
// in one place means the executor, the scripts and a Megatron run agree on who is who.
#include <stdexcept>
#include <string>

namespace mario::dist {

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

}  // namespace mario::dist
