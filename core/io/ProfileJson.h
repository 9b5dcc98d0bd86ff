#pragma once
// Profile files (*.profile.json): the one reader and writer of the format that carries a
// ProfileCostModel's fits (core/cost/ProfileCostModel.h). File format:
//   {"format": "mario-profile", "version": 1, "micro_batch_size": 1, "sequence_length": 2048,
//    "forward_ms": {"a": .., "b": ..}, "backward_ms": {..}, "recompute_ms": {..},
//    "activation_bytes": {..}, "static_bytes": {..},
//    "checkpoint_bytes": .., "send_bytes": ..,
//    optional: "tp", "reduce_grad_ms": {..}, "optimizer_ms": {..},
//              "backward_input_ms": {..}, "backward_weight_ms": {..}  (a split backward's I and W;
//                 without them each is half the backward),
//              "weight_grad_bytes": {..}  (what I keeps until W; without it half the activations),
//              "working_bytes": ..  (an instruction's transient bytes above what it keeps),
//              "contention": ..  (how much slower a stage computes per other device computing at
//                 once, the times being alone: StageCost::contention),
//              "optimizer_contention": ..  (the same for the optimizer step beside neighbours
//                 stepping too: StageCost::optimizer_contention),
//              "embedding": {..}, "head": {..}  (extras added to the first / last stage)}
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/cost/ProfileCostModel.h"
#include "core/util/Result.h"

namespace mario {

// What a profile was measured on, as its file says: shown beside a profile in the window and
// naming the model a live run executes. Empty names and 0 when the file does not record them.
struct ProfileProvenance {
    std::string model;
    std::string hardware;
    int sequence_length = 0;
};

// Reads only the provenance fields, so a profile of a newer format still says what it is.
Result<ProfileProvenance> readProfileProvenance(const std::string& path);
// A profile file's fits; errors in its fields are prefixed with the file's path.
Result<ProfileFits> readProfileFile(const std::string& path);
// path is the JSON path of the object, for errors (empty for a file's root).
Result<ProfileFits> profileFromJson(const nlohmann::json& object, const std::string& path);
// The one profile format, which profileFromJson reads back to the same fits.
nlohmann::json profileToJson(const ProfileFits& fits);

}  // namespace mario
