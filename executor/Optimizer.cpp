#include "executor/Optimizer.h"

#include <cmath>

#include <torch/torch.h>

#include "executor/StageRuntime.h"

namespace mario::exec {

void Optimizer::step(StageRuntime& st) const {
    torch::NoGradGuard noGrad;
    st.gradSnapshot.clear();
    if (adam_) ++st.adamSteps;
    for (auto& [name, p] : st.params) {
        if (!p.grad().defined()) continue;
        // Without a snapshot the step reads the gradient in place: it is zeroed only after.
        const torch::Tensor g = snapshot_ ? p.grad().clone() : p.grad();
        if (snapshot_) st.gradSnapshot[name] = g;
        if (adam_) {
            constexpr double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
            auto& m = st.adamM[name];
            auto& v = st.adamV[name];
            if (!m.defined()) m = torch::zeros_like(g), v = torch::zeros_like(g);
            m.mul_(beta1).add_(g, 1 - beta1);
            v.mul_(beta2).addcmul_(g, g, 1 - beta2);
            const double c1 = 1 - std::pow(beta1, st.adamSteps), c2 = 1 - std::pow(beta2, st.adamSteps);
            p.sub_((m / c1) / ((v / c2).sqrt() + eps) * lr_);
        } else {
            p.sub_(g * lr_);
        }
        p.mutable_grad().zero_();
    }
    st.stepped = true;
}

}  // namespace mario::exec
