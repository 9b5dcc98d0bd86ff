#include "core/cost/ProfileCostModel.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "core/model/ByteRules.h"

namespace mario {

ProfileCostModel::ProfileCostModel(const ProfileFits& f)
    : micro_batch_size_(f.micro_batch_size), sequence_length_(f.sequence_length), tp_(f.tp), forward_ms_(f.forward_ms),
      backward_ms_(f.backward_ms), recompute_ms_(f.recompute_ms), activation_bytes_(f.activation_bytes),
      static_bytes_(f.static_bytes), reduce_grad_ms_(f.reduce_grad_ms), optimizer_ms_(f.optimizer_ms),
      backward_input_ms_(f.backward_input_ms), backward_weight_ms_(f.backward_weight_ms),
      weight_grad_bytes_(f.weight_grad_bytes), working_bytes_(f.working_bytes), contention_(f.contention), optimizer_contention_(f.optimizer_contention),
      checkpoint_bytes_(f.checkpoint_bytes), send_bytes_(f.send_bytes), embedding_(f.embedding), head_(f.head) {}

Result<std::vector<StageCost>> ProfileCostModel::stageCosts(const Config& config,
                                                            const std::vector<StageLayout>& layouts) const {
    int seq = config.model.sequence_length;
    if (sequence_length_ > 0 && seq > 0 && seq != sequence_length_)
        return makeError("measured at sequence length " + std::to_string(sequence_length_) +
                         " but model.sequence_length is " + std::to_string(seq));
    if (tp_ > 0 && config.parallel.tp != tp_)
        return makeError("measured at tp " + std::to_string(tp_) + " but parallel.tp is " +
                         std::to_string(config.parallel.tp));
    double r = double(config.parallel.micro_batch_size) / micro_batch_size_;
    // Slopes scale with the micro-batch, intercepts do not; clamp a negative fitted line.
    auto scaled = [r](const LinearFit& fit, double blocks) { return std::max(0.0, fit.a * blocks * r + fit.b); };
    auto fixed = [](const LinearFit& fit, double blocks) { return std::max(0.0, fit.at(blocks)); };

    std::vector<StageCost> costs;
    costs.reserve(layouts.size());
    for (const StageLayout& layout : layouts) {
        double x = layout.layerCount();
        StageCost c;
        c.forward_ms = scaled(forward_ms_, x);
        c.backward_ms = scaled(backward_ms_, x);
        c.recompute_ms = scaled(recompute_ms_, x);
        c.activation_bytes = scaled(activation_bytes_, x);
        c.static_bytes = fixed(static_bytes_, x);  // weights and optimizer state: batch-independent
        c.checkpoint_bytes = checkpoint_bytes_ * r;
        c.send_bytes = layout.has_head ? 0 : send_bytes_ * r;
        if (config.parallel.dp > 1) c.reduce_grad_ms = fixed(reduce_grad_ms_, x);
        c.optimizer_ms = fixed(optimizer_ms_, x);
        if (backward_input_ms_) c.backward_input_ms = scaled(*backward_input_ms_, x);
        if (backward_weight_ms_) c.backward_weight_ms = scaled(*backward_weight_ms_, x);
        double weightGrad = weight_grad_bytes_ ? scaled(*weight_grad_bytes_, x) : 0;
        // Transients grow with the micro-batch, like the activations they are made from.
        c.working_bytes = working_bytes_ * r;
        c.contention = contention_;
        c.optimizer_contention = optimizer_contention_;
        for (const auto& [present, extra] :
             {std::pair{layout.has_embedding, &embedding_}, std::pair{layout.has_head, &head_}}) {
            if (!present) continue;
            c.forward_ms += extra->forward_ms * r;
            c.backward_ms += extra->backward_ms * r;
            // The extras' backward was measured whole: half to each part of a split one.
            if (c.backward_input_ms) *c.backward_input_ms += extra->backward_ms * r / 2;
            if (c.backward_weight_ms) *c.backward_weight_ms += extra->backward_ms * r / 2;
            c.recompute_ms += extra->recompute_ms * r;
            c.activation_bytes += extra->activation_bytes * r;
            // mario-executor's I keeps the whole graph until W: the extras hold all they keep.
            weightGrad += extra->activation_bytes * r;
            c.static_bytes += extra->static_bytes;
            c.optimizer_ms += extra->optimizer_ms;
            c.working_bytes = std::max(c.working_bytes, extra->working_bytes * r);
        }
        // Measured, or half the activations (StageCost's default); never more than F kept.
        if (weight_grad_bytes_) c.weight_grad_bytes = std::min(weightGrad, c.activation_bytes);
        // A measured split backward is mario-executor's, whose first stage of a chain has no
        // input gradient to make (its input is the token ids): its I does nothing and keeps the
        // whole graph, and its W runs the whole backward (DeviceWorker::backwardInput). Costed
        // as I + W of the blocks, ZB-H1's device 0 was 14% above its measured step with the
        // passes on an H200 (docs/gpu.md#fidelity); on the CPU its I took 0.001 ms, W 7.85
        // against a whole backward of 7.32.
        if (layout.has_embedding && backward_input_ms_) {
            c.backward_input_ms = 0.0;
            c.backward_weight_ms = c.backward_ms;
            c.weight_grad_bytes = c.activation_bytes;
        }
        // The rule every plan reader applies (core/model/ByteRules.h): a profile whose checkpoint
        // outgrows a small stage's activations gave plans that `mario validate` refused and
        // autosaves that could not be restored (issue 39), so it is refused here, where it is made.
        // (The config reader asks about an empty layout, no stage at all, for the profile's
        // sequence length and tp alone.)
        const bool stage = layout.layerCount() > 0 || layout.has_embedding || layout.has_head;
        if (auto problem = checkpointBytesProblem(c.checkpoint_bytes, c.activation_bytes); stage && problem)
            return makeError("stage " + std::to_string(costs.size()) + " (layers [" +
                             std::to_string(layout.begin_layer) + ", " + std::to_string(layout.end_layer) +
                             ")): checkpoint_bytes " + *problem);
        costs.push_back(c);
    }
    return costs;
}

}  // namespace mario
