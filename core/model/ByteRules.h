#pragma once
// Rules on byte counts that more than one reader applies, written once so that the readers
// cannot disagree: whatever one tool writes, the others read back (issue 30). A config that
// `mario plan` accepted once gave a plan that `mario validate` refused (a checkpoint larger than
// its activations), and a memory limit of 1e308 GB became an infinite byte count, written as
// `null`; the window autosaved both and could not restore them.
#include <optional>
#include <string>

namespace mario {

// Why a stage cannot keep `checkpointBytes` after a checkpointed forward when a full forward
// keeps `activationBytes`, or nothing when it can: a checkpoint keeps part of the activations
// (docs/execution-model.md), so the recomputation's share, their difference, is never negative.
// The reason names both values: "2000 is larger than activation_bytes 1000 (…)".
std::optional<std::string> checkpointBytesProblem(double checkpointBytes, double activationBytes);

// Why a stage cannot keep `weightGradBytes` from its I to its W when its forward keeps
// `activationBytes`, or nothing when it can: what W needs is part of the activations, and I frees
// the rest, `activationBytes - weightGradBytes` (docs/execution-model.md). Above the activations,
// I would add memory instead of freeing it, and a device's peak tripled (issue 30). The reason
// names both values: "3000 is larger than activation_bytes 1000 (…)".
std::optional<std::string> weightGradBytesProblem(double weightGradBytes, double activationBytes);

// A device's memory given in GB (1e9 bytes) as bytes, or nothing when that is not a positive
// number within limits::kMaxMemoryBytes: beyond it a size means nothing real, and far beyond
// it (above about 1.8e299 GB) the bytes are not even a finite number.
std::optional<double> gigabytesToBytes(double gigabytes);

// The reason gigabytesToBytes() refuses `gigabytes`, naming the value and the limit.
std::string gigabytesProblem(double gigabytes);

}  // namespace mario
