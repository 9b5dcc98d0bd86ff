#include "core/session/SearchedLayerSplit.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "core/io/ConfigJson.h"
#include "core/session/PlanBuilder.h"
#include "core/session/PreparedSchedule.h"
#include "core/sim/MemoryFit.h"
#include "core/sim/Validator.h"

namespace mario {

namespace {

// A step counts as shorter only past rounding: the same schedule timed through another split
// can differ in its last bits, and such a "gain" would move layers for nothing.
constexpr double kRelativeGain = 1e-9;

bool cancelled(const LayerSplitSearchOptions& options) {
    return options.cancel && options.cancel->load(std::memory_order_relaxed);
}

// Fitting splits first, then the shorter step; a tie keeps the split already held.
bool better(const EvaluatedSplit& a, const EvaluatedSplit& b) {
    if (a.fits != b.fits) return a.fits;
    return a.step_ms < b.step_ms * (1 - kRelativeGain);
}

// The search's state: every split evaluated so far (a move's reverse is never paid twice) and
// the best one.
class SplitSearch {
public:
    SplitSearch(const Config& config, const LayerSplitSearchOptions& options) : config_(config), options_(options) {}

    // Evaluates `counts` unless seen; true when it became the best split.
    bool offer(const std::vector<int>& counts) {
        auto seen = seen_.find(counts);
        if (seen == seen_.end()) {
            if (evaluations_ >= options_.max_evaluations || cancelled(options_)) return false;
            ++evaluations_;
            seen = seen_.emplace(counts, evaluateLayerSplit(config_, counts, options_)).first;
        }
        if (!seen->second || (best_ && !better(*seen->second, *best_))) return false;
        best_ = seen->second;
        bestCounts_ = counts;
        return true;
    }

    // The splits evaluated so far, best first (fitting, then shorter; ties in the order of
    // the map, which is deterministic).
    std::vector<std::vector<int>> ranked() const {
        std::vector<std::pair<std::vector<int>, EvaluatedSplit>> done;
        for (const auto& [counts, evaluated] : seen_)
            if (evaluated) done.emplace_back(counts, *evaluated);
        std::stable_sort(done.begin(), done.end(), [](const auto& a, const auto& b) { return better(a.second, b.second); });
        std::vector<std::vector<int>> out;
        for (auto& entry : done) out.push_back(std::move(entry.first));
        return out;
    }

    bool exhausted() const { return evaluations_ >= options_.max_evaluations || cancelled(options_); }
    const std::optional<EvaluatedSplit>& best() const { return best_; }
    const std::vector<int>& bestCounts() const { return bestCounts_; }
    int evaluations() const { return evaluations_; }

private:
    const Config& config_;
    const LayerSplitSearchOptions& options_;
    std::map<std::vector<int>, std::optional<EvaluatedSplit>> seen_;
    std::optional<EvaluatedSplit> best_;
    std::vector<int> bestCounts_;
    int evaluations_ = 0;
};

// How many distinct orders `counts` has (a multinomial), or `limit + 1` once past `limit`.
long long arrangements(std::vector<int> counts, long long limit) {
    std::sort(counts.begin(), counts.end());
    long long total = 1;
    int placed = 0;
    for (std::size_t i = 0; i < counts.size();) {
        std::size_t j = i;
        while (j < counts.size() && counts[j] == counts[i]) ++j;
        // Choose the places of this value among the ones filled so far plus these: C(n, k)
        // built one factor at a time stays exact.
        for (std::size_t k = 1; k <= j - i; ++k) {
            total = total * (placed + static_cast<long long>(k)) / static_cast<long long>(k);
            if (total > limit) return limit + 1;
        }
        placed += static_cast<int>(j - i);
        i = j;
    }
    return total;
}

// The split with one layer moved from position `from` to position `to`, or nullopt where
// `from` would fall below its least (one layer in the middle, none at either end).
std::optional<std::vector<int>> moved(const std::vector<int>& counts, int from, int to) {
    const int last = static_cast<int>(counts.size()) - 1;
    const int least = from == 0 || from == last ? 0 : 1;
    if (counts[from] <= least) return std::nullopt;
    std::vector<int> next = counts;
    --next[from];
    ++next[to];
    return next;
}

// The even split's layers per chain position: every search starts from it.
Result<std::vector<int>> evenLayerCounts(const Config& config) {
    Config even = config;
    even.parallel.layer_split = {};
    return chainLayerCounts(even);
}

}  // namespace

std::optional<EvaluatedSplit> evaluateLayerSplit(const Config& config, const std::vector<int>& counts,
                                                 const LayerSplitSearchOptions& options) {
    Config candidate = config;
    candidate.parallel.layer_split = {LayerSplitKind::Explicit, counts};
    auto plan = buildPlan(candidate);
    if (!plan || !Validator::validate(*plan).ok()) return std::nullopt;
    ScheduleInput input;
    input.config = candidate;
    input.source = std::move(*plan);
    input.passes = options.passes;
    input.effort = options.effort;
    auto prepared = prepareSchedule(input, {.cancel = options.cancel});
    if (!prepared || cancelled(options)) return std::nullopt;
    return EvaluatedSplit{prepared->result.makespan_ms, memoryFit(prepared->result, prepared->plan.info).fits()};
}

namespace {

// First improvement over the one-layer moves between neighbours in a fixed order: (0 -> 1),
// (1 -> 0), (1 -> 2), ...; a move that improved is tried again at once (a layer often wants to
// travel further), until a whole round of them gains nothing or the search is exhausted.
void descendByNeighbourMoves(SplitSearch& search, int positions) {
    const int moves = 2 * (positions - 1);
    int move = 0, withoutGain = 0;
    while (withoutGain < moves && !search.exhausted()) {
        const int left = move / 2, right = left + 1;
        const auto next = move % 2 == 0 ? moved(search.bestCounts(), left, right)
                                        : moved(search.bestCounts(), right, left);
        if (next && search.offer(*next)) {
            withoutGain = 0;
            continue;
        }
        ++withoutGain;
        move = (move + 1) % moves;
    }
}

// The first one-layer move between positions further apart that gains, in the order (0 -> 2),
// (0 -> 3), ..., (1 -> 3), ...: a layer that must cross a position whose step gets worse on the
// way cannot arrive by neighbour moves (GPipe 4 x 8, 10 layers, with the embedding table's dense
// gradient priced: 2-3-3-2 to 3-3-3-1 is 0.5% faster, every neighbour move from it slower).
bool gainByAFartherMove(SplitSearch& search, int positions) {
    for (int from = 0; from < positions; ++from)
        for (int to = 0; to < positions; ++to) {
            if (search.exhausted()) return false;
            if (std::abs(from - to) < 2) continue;
            if (const auto next = moved(search.bestCounts(), from, to); next && search.offer(*next)) return true;
        }
    return false;
}

Result<LayerSplitSearch> searchWith(const Config& config, const LayerSplitSearchOptions& options,
                                    std::vector<std::vector<int>>* ranked) {
    auto evenCounts = evenLayerCounts(config);
    if (!evenCounts) return evenCounts.error();
    SplitSearch search(config, options);
    if (!search.offer(*evenCounts))
        return makeError("parallel.layer_split: search: the even split " +
                         std::string(cancelled(options) ? "was cancelled" : "cannot be built or simulated"));
    LayerSplitSearch out;
    out.even_step_ms = search.best()->step_ms;

    Config balanced = config;
    balanced.parallel.layer_split = {LayerSplitKind::Balanced, {}};
    if (auto counts = chainLayerCounts(balanced)) search.offer(*counts);

    // The even split's counts in every order, when there are few: they all tie on the busiest
    // position's layers, yet where the heavier positions sit moves the step by up to 14% with
    // the passes (LLaMA-2 3B 1F1B 8 x 16: the best of the 28 orders 4-4-3-3-3-3-3-3, +2.3%
    // above T_base, the worst +16.1%), and one-layer moves from even cannot get there (each
    // step through 3-layer neighbours gains nothing). In lexicographic order.
    if (arrangements(*evenCounts, kEvenArrangements) <= kEvenArrangements) {
        std::vector<int> order = *evenCounts;
        std::sort(order.begin(), order.end());
        do search.offer(order);
        while (std::next_permutation(order.begin(), order.end()) && !search.exhausted());
    }

    // Neighbour moves until none gains, then the first farther move that gains, and again; the
    // search ends when neither kind gains, or at the cap. The neighbour moves run first and alone
    // as before, so a split they settle on within the cap is only ever improved on.
    const int positions = static_cast<int>(evenCounts->size());
    bool settled = positions <= 1;
    while (!settled && !search.exhausted()) {
        descendByNeighbourMoves(search, positions);
        settled = !gainByAFartherMove(search, positions) && !search.exhausted();
    }
    out.local_optimum = settled;
    out.counts = search.bestCounts();
    out.step_ms = search.best()->step_ms;
    out.fits = search.best()->fits;
    out.evaluations = search.evaluations();
    if (ranked) *ranked = search.ranked();
    return out;
}

// Everything a search's answer depends on: the config as written (model and hardware inline), the
// passes, their budgets and the cap.
std::string searchKey(const Config& config, const LayerSplitSearchOptions& options) {
    std::string key = writeConfig(config).dump();
    for (PassId pass : options.passes) key += "|" + std::to_string(static_cast<int>(pass));
    key += "|" + std::to_string(options.effort.prepose_simulations) + "," +
           std::to_string(options.effort.hide_simulations) + "," +
           std::to_string(options.effort.reorder_evaluations) + "," + std::to_string(options.max_evaluations);
    return key;
}

// The last finished search. `mario simulate` on a "search" config builds the plan (a search with
// the file's passes) and then searches with the passes it runs, which are the file's own unless
// --passes says otherwise: the same search twice, each seconds long on big plans. A cancelled
// search is partial and never kept.
struct LastSearch {
    std::mutex mutex;
    std::string key;
    std::optional<LayerSplitSearch> result;
};
LastSearch& lastSearch() {
    static LastSearch last;
    return last;
}

Result<LayerSplitSearch> searchUncached(const Config& config, const LayerSplitSearchOptions& options) {
    const bool reorders = std::find(options.passes.begin(), options.passes.end(), PassId::Reorder) != options.passes.end();
    if (!reorders) return searchWith(config, options, nullptr);

    // Screen without reorder, then reorder the best few: reorder costs 10-100 times the other
    // passes, and on some splits far more (LLaMA-2 3B ZBV 8 x 16 with an empty first stage:
    // 6.8 s against 268 ms on the even split), which made a 64-split search take five minutes.
    // The tuner refines its best candidates the same way. The even split is always refined,
    // so the answer is never slower than even with the passes the user runs.
    LayerSplitSearchOptions screening = options;
    screening.passes.erase(std::remove(screening.passes.begin(), screening.passes.end(), PassId::Reorder),
                           screening.passes.end());
    std::vector<std::vector<int>> ranked;
    auto screened = searchWith(config, screening, &ranked);
    if (!screened) return screened;

    auto evenCounts = evenLayerCounts(config);
    if (!evenCounts) return evenCounts.error();
    std::vector<std::vector<int>> refine{*evenCounts};
    for (const auto& counts : ranked) {
        if (static_cast<int>(refine.size()) == kRefinedSplits + 1) break;  // even + kRefinedSplits others
        if (counts != *evenCounts) refine.push_back(counts);
    }
    LayerSplitSearch out = *screened;  // its evaluations count on with the refined ones
    std::optional<EvaluatedSplit> best;
    for (const auto& counts : refine) {
        if (cancelled(options)) break;
        auto evaluated = evaluateLayerSplit(config, counts, options);
        ++out.evaluations;
        if (!evaluated) continue;
        if (counts == *evenCounts) out.even_step_ms = evaluated->step_ms;
        if (best && !better(*evaluated, *best)) continue;
        best = evaluated;
        out.counts = counts;
        out.step_ms = evaluated->step_ms;
        out.fits = evaluated->fits;
    }
    if (!best)
        return makeError("parallel.layer_split: search: the even split " +
                         std::string(cancelled(options) ? "was cancelled" : "cannot be built or simulated"));
    return out;
}

}  // namespace

Result<LayerSplitSearch> searchLayerSplit(const Config& config, const LayerSplitSearchOptions& options) {
    const std::string key = searchKey(config, options);
    LastSearch& last = lastSearch();
    {
        std::lock_guard lock(last.mutex);
        if (last.result && last.key == key) return *last.result;
    }
    const auto start = std::chrono::steady_clock::now();
    auto found = searchUncached(config, options);
    if (found) found->search_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (found && !cancelled(options)) {
        std::lock_guard lock(last.mutex);
        last.key = key;
        last.result = *found;
    }
    return found;
}

}  // namespace mario
