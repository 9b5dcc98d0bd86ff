#include "core/model/ByteRules.h"

#include <charconv>
#include <cmath>

#include "core/model/Limits.h"

namespace mario {
namespace {

// The shortest text that reads back as the same double ("2000", "0.1", "1e+308").
std::string shown(double value) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    return std::string(text, end);
}

}  // namespace

std::optional<std::string> checkpointBytesProblem(double checkpointBytes, double activationBytes) {
    if (!(checkpointBytes > activationBytes)) return std::nullopt;
    return shown(checkpointBytes) + " is larger than activation_bytes " + shown(activationBytes) +
           " (a checkpoint keeps part of the activations)";
}

std::optional<std::string> weightGradBytesProblem(double weightGradBytes, double activationBytes) {
    if (!(weightGradBytes > activationBytes)) return std::nullopt;
    return shown(weightGradBytes) + " is larger than activation_bytes " + shown(activationBytes) +
           " (W keeps part of the activations, and I frees the rest)";
}

std::optional<double> gigabytesToBytes(double gigabytes) {
    const double bytes = gigabytes * 1e9;
    if (!(bytes > 0) || !std::isfinite(bytes) || bytes > limits::kMaxMemoryBytes) return std::nullopt;
    return bytes;
}

std::string gigabytesProblem(double gigabytes) {
    return "expected a positive number of GB up to " + shown(limits::kMaxMemoryBytes / 1e9) +
           " (an exabyte per device; got " + shown(gigabytes) + ")";
}

}  // namespace mario
