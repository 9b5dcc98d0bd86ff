#include "executor/ProfileNotes.h"

namespace mario::exec {

std::string profileNotes(const ProfileOptions& options, const ProfileSetting& setting) {
    return "Measured on " + setting.place + " by mario-executor profile (LibTorch, " + options.dtype + ", " +
           std::to_string(setting.intra_op_threads) + " intra-op threads): `" + options.command_line + "`. " +
           (setting.neighbours > 0
                ? "Every block stage was measured alone, which the fits are, and again while " +
                      std::to_string(setting.neighbours) +
                      (setting.partitioned ? " other partitions ran the same blocks (sharing HBM, L2 and power)"
                                           : " other threads ran the same blocks (sharing cores and caches)") +
                      "; contention is (busy time / alone time - 1) / neighbours over all their timed phases, "
                      "source.contention has the busy points. optimizer_contention is the same for the "
                      "largest stage's optimizer step alone and while every neighbour stepped its own copy "
                      "(streaming steps share the memory bandwidth), source.contention.optimizer_step has both "
                      "medians. "
                : std::string()) +
           "Stages of 1.." + std::to_string(options.max_blocks) + " transformer blocks; times are the median of " +
           std::to_string(options.repeats) + " runs after one warm-up, " +
           (setting.cuda ? "timed by CUDA events on the measuring stream (GPU time, no host waits between phases)"
                         : "timed by the steady clock on the CPU") +
           "; forward is with grad, recompute is a forward with grad from the saved stage "
           "input, backward is that forward's backward; backward_input_ms (I) and backward_weight_ms (W) are a "
           "split backward as mario-executor runs it: I the input's gradient with the graph kept, then W the "
           "parameters' gradients, which walks the graph again (I + W exceeds the whole backward); gradients stay "
           "allocated between repeats, so every backward adds into them as all but a step's first micro-batch do; "
           "optimizer_ms is one " +
           std::string(options.adam ? "Adam" : "SGD") +
           " step of the stage's weights (`run --optimizer`), zeroing the gradients after. activation_bytes: "
           "bytes allocated on the measured device (live CPU bytes on the CPU) after the forward minus "
           "before (autograd graph plus stage output), via c10's allocator memory-reporting hook; "
           "weight_grad_bytes: what the split backward's I leaves allocated until W, over the level before "
           "the forward; working_bytes: the most any phase (forward, backward, I, W) allocates above the level "
           "it starts from (forward: above what it keeps), the largest over the block slices (embedding and head "
           "their own), measured in the first repeat after the warm-up. static_bytes: "
           "parameters x element size x " +
           std::string(options.adam ? "4 (weight, gradient, two Adam moments)" : "2 (weight and gradient)") +
           ". checkpoint_bytes and send_bytes: the "
           "[micro_batch, seq, hidden] boundary tensor. embedding/head: those slices measured alone. "
           "Fits are least squares y = a*blocks + b (negative slopes clamped to 0); source.r2 has every fit's R².";
}

namespace {

nlohmann::json timesOf(const ProfilePoint& p) {
    return {{"blocks", p.blocks},
            {"forward_ms", p.forward_ms},
            {"backward_ms", p.backward_ms},
            {"backward_input_ms", p.backward_input_ms},
            {"backward_weight_ms", p.backward_weight_ms},
            {"recompute_ms", p.recompute_ms},
            {"optimizer_ms", p.optimizer_ms}};
}

}  // namespace

nlohmann::json profileSource(const ProfileResult& result, int neighbours) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : result.points) {
        nlohmann::json point = timesOf(p);
        point["activation_bytes"] = p.activation_bytes;
        point["weight_grad_bytes"] = p.weight_grad_bytes;
        point["working_bytes"] = p.working_bytes;
        point["static_bytes"] = p.static_bytes;
        points.push_back(std::move(point));
    }
    nlohmann::json r2 = nlohmann::json::object();
    for (const auto& [name, value] : fitQualities(result)) r2[name] = value;
    nlohmann::json source = {{"tool", "mario-executor profile"}, {"r2", r2}, {"points", points}};
    if (neighbours > 0) {
        nlohmann::json busy = nlohmann::json::array();
        for (const auto& p : result.busy_points) busy.push_back(timesOf(p));
        source["contention"] = {
            {"neighbours", neighbours}, {"per_neighbour", result.contention}, {"busy_points", busy}};
        if (result.optimizer_contention)
            source["contention"]["optimizer_step"] = {{"alone_ms", result.step_alone_ms.value_or(0)},
                                                      {"beside_ms", result.step_beside_ms.value_or(0)},
                                                      {"per_neighbour", *result.optimizer_contention}};
    }
    return source;
}

}  // namespace mario::exec
