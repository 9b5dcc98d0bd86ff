#include "core/model/Schemes.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace mario {
namespace {

using P = Placement;
// name, placement, chunked, split backward, even devices, even micro-batches, grouped,
// micro-batches per device at least, Megatron-LM runs it, description
constexpr std::array<SchemeInfo, 11> kSchemes{{
    {Scheme::GPipe, "gpipe", P::Looped, false, false, false, false, false, 0, false,
     "all forwards, then all backwards"},
    {Scheme::OneFOneB, "1f1b", P::Looped, false, false, false, false, false, 0, true,
     "one forward one backward (PipeDream-flush)"},
    {Scheme::Interleaved, "interleaved", P::Looped, true, false, false, false, true, 0, true,
     "Megatron's interleaved 1F1B, v stages per device"},
    {Scheme::Chimera, "chimera", P::TwoDirections, false, false, true, true, false, 0, false,
     "two pipelines in opposite directions, weights replicated"},
    {Scheme::LoopedBfs, "bfs", P::Looped, true, false, false, false, false, 0, false,
     "looped breadth-first: every micro-batch through one stage, then the next"},
    {Scheme::ZbH1, "zb-h1", P::Looped, false, true, false, false, false, 0, false,
     "zero bubble H1: 1F1B's memory, weight gradients fill the drain"},
    {Scheme::ZbH2, "zb-h2", P::Looped, false, true, false, false, false, 0, false,
     "zero bubble H2: more forwards in flight, no bubble when F = I = W"},
    {Scheme::InterleavedZb, "interleaved-zb", P::Looped, true, true, false, false, true, 0, false,
     "interleaved 1F1B with split backward, weight gradients fill bubbles"},
    {Scheme::Zbv, "zbv", P::V, false, true, false, false, false, 0, false,
     "zero bubble V: two stages per device in a V, 1F1B's memory"},
    // DualPipe's steady phase runs m − p + h + 1 paired steps per leg (DualPipeV: N − 2p + r + 1).
    // DualPipeV sends every micro-batch down and back up the one V, so any count from 2p runs
    // (PyTorch's ScheduleDualPipeV builds odd ones); DualPipe halves the batch between its two
    // directions, so its count must be even.
    {Scheme::DualPipeV, "dualpipev", P::V, false, true, false, false, false, 2, false,
     "DeepSeek's DualPipe cut in half: V placement, one copy of the weights"},
    {Scheme::DualPipe, "dualpipe", P::TwoDirections, false, true, true, true, false, 2, false,
     "DeepSeek's DualPipe: two directions, two copies of the weights"},
}};

std::string lowered(std::string_view text) {
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return lower;
}

}  // namespace

std::span<const SchemeInfo> schemeCatalog() { return kSchemes; }

const SchemeInfo& schemeInfo(Scheme scheme) {
    for (const SchemeInfo& info : kSchemes)
        if (info.scheme == scheme) return info;
    return kSchemes.front();
}

std::vector<Scheme> allSchemes() {
    std::vector<Scheme> schemes;
    for (const SchemeInfo& info : kSchemes) schemes.push_back(info.scheme);
    return schemes;
}

std::string_view schemeName(Scheme scheme) { return schemeInfo(scheme).name; }

std::optional<Scheme> parseScheme(std::string_view text) {
    const std::string lower = lowered(text);
    for (const SchemeInfo& info : kSchemes)
        if (lower == info.name) return info.scheme;
    if (lower == "v") return Scheme::OneFOneB;
    if (lower == "w") return Scheme::Interleaved;
    if (lower == "x") return Scheme::Chimera;
    return std::nullopt;
}

namespace {

// "a, b or c" of the schemes that `keep` accepts.
template <typename Keep>
std::string joinedNames(Keep keep, const char* conjunction) {
    std::vector<std::string_view> names;
    for (const SchemeInfo& info : kSchemes)
        if (keep(info)) names.push_back(info.name);
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) text += i + 1 == names.size() ? conjunction : ", ";
        text += names[i];
    }
    return text;
}

}  // namespace

std::string schemeNameList() {
    return joinedNames([](const SchemeInfo&) { return true; }, " or ");
}

std::string chunkedSchemeNames() {
    return joinedNames([](const SchemeInfo& info) { return info.chunked; }, " and ");
}

int stagesPerDevice(Scheme scheme, int chunks) {
    const SchemeInfo& info = schemeInfo(scheme);
    if (info.chunked) return std::max(1, chunks);
    return info.placement == Placement::Looped ? 1 : 2;
}

int chainLength(Scheme scheme, int devices, int chunks) {
    const SchemeInfo& info = schemeInfo(scheme);
    if (info.placement == Placement::TwoDirections) return devices;
    return devices * stagesPerDevice(scheme, chunks);
}

}  // namespace mario
