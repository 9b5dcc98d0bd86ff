#pragma once
// The schedule tuner's vocabulary (paper §5.3, equation 1): a candidate configuration, what
// evaluating it gave, and the options of a search.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/Config.h"
#include "core/passes/PassReport.h"

namespace mario {

struct TuneCandidate {
    Scheme scheme = Scheme::OneFOneB;
    int chunks = 1;  // interleaved v
    int pp = 1, dp = 1, tp = 1;
    int micro_batch_size = 1;
    bool checkpoint = false;  // Mario's passes on

    int microbatches(int globalBatch) const { return globalBatch / (dp * micro_batch_size); }
    // "chimera pp=32 dp=2 tp=1 mbs=4 +mario", "interleaved(v=2) …"
    std::string label() const;
    friend bool operator==(const TuneCandidate&, const TuneCandidate&) = default;
};

struct TuneOutcome {
    TuneCandidate candidate;
    bool evaluated = false;  // false when a cancel came first
    bool feasible = false;
    std::string rejection;     // why not: "device 0 needs 52.3 GB, 12.3 GB over the 40 GB limit"
    bool pruned = false;       // rejected by the cheap memory bound, never simulated
    double step_ms = 0;        // simulated step, all-reduce included
    double samples_per_s = 0;  // global batch / step: the cost model prices data parallelism itself
    double tokens_per_s = 0;
    double mfu = 0;  // model FLOPs utilisation (0: unknown, as with unit costs or profiles)
    // The passes this outcome was measured with, in order: none without checkpointing, the
    // screening list, or the refinement's for the top candidates. Opening or exporting the
    // candidate applies exactly these, so its schedule is the one ranked.
    std::vector<PassId> passes;
    double bubble_ratio = 0;
    double peak_bytes = 0;  // highest device (for a pruned candidate: its cheap lower bound)
    std::vector<double> device_peak_bytes;
};

// The tensor-parallel degrees a search "within a node" tries (the CLI's --tp, the tuner
// panel's check box): powers of two up to the 8 GPUs of one node.
inline const std::vector<int>& tensorParallelWithinNode() {
    static const std::vector<int> degrees{1, 2, 4, 8};
    return degrees;
}

struct TuneOptions {
    int devices = 8;
    std::optional<double> memory_limit_bytes;    // default: the hardware's memory
    std::vector<Scheme> schemes = allSchemes();  // every scheme of the catalog
    std::vector<int> interleaved_chunks = {2, 4};
    std::vector<int> tensor_parallel = {1};  // tensorParallelWithinNode() to search TP
    std::vector<bool> checkpointing = {false, true};
    int max_micro_batch_size = 64;
    // Only these micro-batch sizes (empty: every power of two up to max_micro_batch_size).
    std::vector<int> micro_batch_sizes;
    int min_pp = 2;
    int max_pp = 0;   // 0: as deep as the devices allow
    int threads = 0;  // 0: hardware concurrency
    // The top candidates are re-evaluated with the full Mario passes (prepose-forward and
    // hide-recompute included, and reorder); the rest are screened with the cheap three.
    int refine_top = 8;
    // Prepose-forward's effort per refined candidate, in simulations (hide-recompute gets as
    // many): a bound that keeps the search time predictable on huge plans (0: unbounded).
    // Tuner::passEffort turns it into the caps every pass run of a candidate uses, the
    // window's included when it opens one.
    int prepose_simulations = 48;
    // Reorder's effort per refined candidate, in instructions its trials re-time (the pass
    // alone: 3 million). On LLaMA-2 13B's tuner runs of 32 A100s (docs/reorder.md) 300 000 kept
    // the gains that 3 million found but one (+0.2%), at a fifth of the time.
    int reorder_evaluations = 300'000;
    // The passes a checkpointed candidate may run (--passes), in any order; nullopt: the pass
    // table's tuner columns (tunerPasses). Screening runs those of them that screening may
    // (all but prepose and hide, which only refine); refining runs them all. An empty list
    // searches without checkpointing; any other must name checkpoint (the "+mario" candidates
    // are the checkpointed ones).
    std::optional<std::vector<PassId>> passes;
};

struct TuneProgress {
    int evaluated = 0;
    int total = 0;                  // grows by the refined candidates when refining starts
    double best_samples_per_s = 0;  // best feasible so far
    bool refining = false;          // re-evaluating the best with all four passes, hide and reorder
};

}  // namespace mario

namespace mario {

struct TuneResult {
    std::vector<TuneOutcome> outcomes;  // in search-space order, whatever the thread count
    std::vector<int> ranking;           // feasible outcomes, best throughput first
    std::vector<int> pareto;            // throughput vs peak memory front, by ascending memory
    std::optional<int> best;
    std::optional<int> best_without_checkpointing;
    double speedup_over_no_checkpointing = 0;  // best / best without checkpointing (0: none fits)
    std::string nothing_fits;                  // when no candidate fits: the closest miss, in words
    bool cancelled = false;
    int simulated = 0;  // simulations in all: every candidate's, then the refined ones' again
    int pruned = 0;
    // The best candidates simulated a second time with the refining passes (their outcomes
    // replace the first when better): the candidates simulated once are simulated - refined.
    int refined = 0;
    double elapsed_ms = 0;
};

}  // namespace mario
