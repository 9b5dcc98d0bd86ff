#pragma once
// The pipeline schemes Mario generates: one table that owns their names, where their stages
// sit and what sizes they accept. Config files, the CLI, the window's scheme list, the tuner
// and the launch exports all read it, so a scheme is added here once.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace mario {

enum class Scheme {
    GPipe,
    OneFOneB,
    Interleaved,
    Chimera,
    LoopedBfs,
    ZbH1,
    ZbH2,
    InterleavedZb,
    Zbv,
    DualPipeV,
    DualPipe,
};

// Where a scheme's stages sit on the p pipeline devices.
enum class Placement {
    Looped,         // one chain; stage s on device s mod p (v stages per device when chunked)
    V,              // one chain of 2p stages; device d holds stages d and 2p − 1 − d
    TwoDirections,  // two chains of p stages over the same devices in opposite directions
};

struct SchemeInfo {
    Scheme scheme;
    std::string_view name;  // as configs, the CLI and plans write it
    Placement placement;
    bool chunked;                     // takes `chunks` (v stages per device, v ≥ 2)
    bool split_backward;              // backward split into I (input gradient) and W (weights)
    bool even_devices;                // needs an even number of pipeline devices
    bool even_microbatches;           // needs an even number of micro-batches
    bool grouped;                     // micro-batches go in groups (group_size, default pp) that divide them
    int min_microbatches_per_device;  // at least this many micro-batches per pipeline device
    bool megatron_schedule;           // Megatron-LM runs it (launch exports)
    std::string_view description;     // one line for lists and help
};

// Every scheme, in the order lists show them.
std::span<const SchemeInfo> schemeCatalog();
const SchemeInfo& schemeInfo(Scheme scheme);
std::vector<Scheme> allSchemes();

std::string_view schemeName(Scheme scheme);
// Case-insensitive; also accepts the paper's letters "V" (1F1B), "W" (interleaved), "X" (Chimera).
std::optional<Scheme> parseScheme(std::string_view text);
// "gpipe, 1f1b, ... or dualpipe", for "expected …" in error messages.
std::string schemeNameList();
// "interleaved, bfs and interleaved-zb": the schemes that take chunks.
std::string chunkedSchemeNames();

// Stages on each device: v for chunked schemes, 2 for V placement and two directions, else 1.
int stagesPerDevice(Scheme scheme, int chunks);
// The length of the chain a micro-batch walks (the model is cut into this many stages).
int chainLength(Scheme scheme, int devices, int chunks);

}  // namespace mario
