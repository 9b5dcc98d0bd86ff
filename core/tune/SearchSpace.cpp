// The tuner's search space and the configs of its candidates (paper §5.3, equation 1):
// scheme × PP × DP × TP × micro-batch size × checkpointing with PP·DP·TP = devices and the
// global batch fixed.
#include <algorithm>
#include <cstdio>

#include "core/model/Limits.h"
#include "core/passes/PassVocabulary.h"
#include "core/schedule/Generators.h"
#include "core/tune/Tuner.h"

namespace mario {

std::string TuneCandidate::label() const {
    std::string scheme_text(schemeName(scheme));
    if (schemeInfo(scheme).chunked) scheme_text += "(v=" + std::to_string(chunks) + ")";
    char text[160];
    std::snprintf(text, sizeof text, "%s pp=%d dp=%d tp=%d mbs=%d%s", scheme_text.c_str(), pp, dp, tp, micro_batch_size,
                  checkpoint ? " +mario" : "");
    return text;
}

Result<bool> Tuner::checkOptions(const Config& base, const TuneOptions& options) {
    if (base.unit_costs)
        return makeError("the tuner needs a model and hardware (unit costs have no memory or FLOPs to trade)");
    if (options.devices < 2 || options.devices > limits::kMaxDevices)
        return makeError("--devices: the tuner searches 2 to " + std::to_string(limits::kMaxDevices) +
                         " devices, got " + std::to_string(options.devices));
    if (base.parallel.global_batch_size < 1) return makeError("parallel.global_batch_size: must be positive");
    if (options.schemes.empty()) return makeError("no scheme to search");
    if (options.checkpointing.empty()) return makeError("no checkpointing setting to search");
    for (int tp : options.tensor_parallel)
        if (tp < 1) return makeError("tensor parallel sizes must be positive, got " + std::to_string(tp));
    for (int mbs : options.micro_batch_sizes)
        if (mbs < 1 || mbs > limits::kMaxMicroBatchSize)
            return makeError("--micro-batch-sizes: expected sizes in [1, " +
                             std::to_string(limits::kMaxMicroBatchSize) + "], got " + std::to_string(mbs));
    if (options.max_pp > 0 && options.max_pp < options.min_pp)
        return makeError("--pp: the deepest pipeline (" + std::to_string(options.max_pp) +
                         ") is shallower than the shallowest (" + std::to_string(options.min_pp) + ")");
    if (options.memory_limit_bytes && *options.memory_limit_bytes <= 0) return makeError("--memory: must be positive");
    if (options.passes && !options.passes->empty() &&
        std::find(options.passes->begin(), options.passes->end(), PassId::Checkpoint) == options.passes->end())
        return makeError("--passes: the tuner runs passes on the checkpointed candidates (\"+mario\"), so the list "
                         "needs checkpoint (e.g. checkpoint,overlap,redundancy); \"none\" searches without "
                         "checkpointing");
    if (options.threads < 0 || options.threads > limits::kMaxThreads)
        return makeError("--threads: expected 0 (one per core) to " + std::to_string(limits::kMaxThreads) + ", got " +
                         std::to_string(options.threads));
    return true;
}

namespace {

std::vector<int> microBatchSizes(const TuneOptions& options) {
    if (!options.micro_batch_sizes.empty()) return options.micro_batch_sizes;
    std::vector<int> sizes;
    for (int mbs = 1; mbs <= options.max_micro_batch_size; mbs *= 2) sizes.push_back(mbs);
    return sizes;
}

}  // namespace

std::vector<TuneCandidate> Tuner::searchSpace(const Config& base, const TuneOptions& options) {
    std::vector<TuneCandidate> space;
    const int devices = options.devices;
    const int global = base.parallel.global_batch_size;
    const int layers = base.model.layers;
    const int heads = base.model.heads;
    for (int tp : options.tensor_parallel) {
        // TP stays inside a node and must divide the heads, the KV heads (Megatron-LM's rule, which
        // the plan builder applies too) and the devices.
        const int kvHeads = base.model.kvHeads();
        if (tp > base.hardware.gpus_per_node || devices % tp != 0 || (heads > 0 && heads % tp != 0) ||
            (kvHeads > 0 && kvHeads % tp != 0))
            continue;
        const int deepest = options.max_pp > 0 ? std::min(options.max_pp, devices / tp) : devices / tp;
        for (int pp = std::max(1, options.min_pp); pp <= deepest; ++pp) {
            if ((devices / tp) % pp != 0) continue;
            const int dp = devices / (tp * pp);
            for (Scheme scheme : options.schemes) {
                const bool chunked = schemeInfo(scheme).chunked;
                const std::vector<int> chunkChoices = chunked ? options.interleaved_chunks : std::vector<int>{1};
                for (int chunks : chunkChoices) {
                    if (chunked && chunks < 2) continue;
                    if (chainLength(scheme, pp, chunks) > layers) continue;
                    for (int mbs : microBatchSizes(options)) {
                        // 64-bit: dp * mbs of in-range values can exceed int (and wrap to 0).
                        const long long samples = static_cast<long long>(dp) * mbs;
                        if (global % samples != 0) continue;
                        const int m = static_cast<int>(global / samples);
                        if (m > limits::kMaxMicrobatches) continue;
                        // The generators' own rules (even sizes, group divisibility, DualPipe's 2p).
                        if (!checkShape(ScheduleShape{scheme, pp, chunks, m})) continue;
                        for (bool checkpoint : options.checkpointing)
                            // --passes none: no pass to run, so no "+mario" twin of each candidate.
                            if (!checkpoint || !options.passes || !options.passes->empty())
                                space.push_back({scheme, chunks, pp, dp, tp, mbs, checkpoint});
                    }
                }
            }
        }
    }
    return space;
}

double Tuner::searchPairs(const Config& base, const std::vector<TuneCandidate>& space) {
    double pairs = 0;
    for (const TuneCandidate& c : space)
        pairs += double(chainLength(c.scheme, c.pp, c.chunks)) * c.microbatches(base.parallel.global_batch_size);
    return pairs;
}

Config Tuner::configFor(const Config& base, const TuneCandidate& c, const TuneOptions& options) {
    Config config = base;
    config.name = c.label();
    config.parallel.scheme = c.scheme;
    config.parallel.chunks = c.chunks;
    config.parallel.pp = c.pp;
    config.parallel.dp = c.dp;
    config.parallel.tp = c.tp;
    config.parallel.micro_batch_size = c.micro_batch_size;
    config.parallel.group_size = 0;
    // Explicit layer counts belong to the base's chain; another shape gets the even split
    // ("balanced" is a rule, and applies to every candidate). "search" simulates up to 64 splits
    // per plan (core/session/SearchedLayerSplit.h): thousands of candidates would each pay that,
    // so the tuner ranks them on the even split (docs/sweeps.md says so).
    if ((config.parallel.layer_split.kind == LayerSplitKind::Explicit &&
         (c.scheme != base.parallel.scheme || c.pp != base.parallel.pp || c.chunks != base.parallel.chunks)) ||
        config.parallel.layer_split.kind == LayerSplitKind::Search)
        config.parallel.layer_split = {};
    config.microbatches.reset();
    // The search's limit, else the config's, else the device's memory.
    config.memory_limit_bytes = options.memory_limit_bytes ? options.memory_limit_bytes
                                : base.memory_limit_bytes  ? base.memory_limit_bytes
                                                           : std::optional<double>(base.hardware.memory_gb * 1e9);
    config.passes.clear();
    // The passes the tuner refines with (what planFor applies and an export writes).
    if (c.checkpoint) config.passes = passNames(refiningPasses(options));
    return config;
}

}  // namespace mario
