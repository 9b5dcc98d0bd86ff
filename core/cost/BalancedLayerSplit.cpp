#include "core/cost/BalancedLayerSplit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>

namespace mario {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Loads summed in different orders differ in their last bits; a split within this share of
// the optimum is as good as it, so that the tie-break, not rounding, picks between them.
constexpr double kTie = 1e-9;

// Positions that share a device, and the work each device of the group does: every device of a
// group holds the same positions (checked), `multiplicity` times each.
struct DeviceGroup {
    std::vector<int> positions;     // distinct, ascending
    std::vector<int> multiplicity;  // how often one device of the group holds each
};

// One way to give a group K layers: its load, its distance to the preferred split and the
// counts of its positions.
struct Partial {
    double load = 0;
    int distance = 0;
    std::vector<int> counts;
};

int findRoot(std::vector<int>& parent, int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

Result<std::vector<DeviceGroup>> deviceGroups(const LayerSplitProblem& problem, int positions) {
    std::vector<int> parent(positions);
    std::iota(parent.begin(), parent.end(), 0);
    std::vector<bool> held(positions, false);
    for (const auto& device : problem.device_positions)
        for (int p : device) {
            if (p < 0 || p >= positions)
                return makeError("layer split: a device holds position " + std::to_string(p) + " of a chain of " +
                                 std::to_string(positions));
            held[p] = true;
            parent[findRoot(parent, p)] = findRoot(parent, device.front());
        }
    for (int p = 0; p < positions; ++p)
        if (!held[p]) return makeError("layer split: no device holds chain position " + std::to_string(p));
    std::vector<int> groupOf(positions, -1);
    std::vector<DeviceGroup> groups;
    std::vector<std::vector<int>> firstHolding;  // per group, one device's sorted positions
    for (const auto& device : problem.device_positions) {
        if (device.empty()) continue;
        std::vector<int> sorted = device;
        std::sort(sorted.begin(), sorted.end());
        int& g = groupOf[findRoot(parent, device.front())];
        if (g < 0) {
            g = static_cast<int>(groups.size());
            DeviceGroup group;
            for (int p : sorted)
                if (group.positions.empty() || group.positions.back() != p) {
                    group.positions.push_back(p);
                    group.multiplicity.push_back(1);
                } else {
                    ++group.multiplicity.back();
                }
            groups.push_back(group);
            firstHolding.push_back(sorted);
        } else if (firstHolding[g] != sorted) {
            return makeError("layer split: devices share chain positions without holding the same ones");
        }
    }
    return groups;
}

// Per layer total K (0 .. layers), the Pareto front of (load, distance) over the ways to give
// the group's positions K layers, ascending in load and descending in distance.
std::vector<std::vector<Partial>> groupFronts(const LayerSplitProblem& problem, const DeviceGroup& group) {
    const int layers = problem.layers;
    std::vector<std::vector<Partial>> fronts(layers + 1);
    fronts[0].push_back({});
    for (std::size_t i = 0; i < group.positions.size(); ++i) {
        const int p = group.positions[i];
        const std::vector<double>& loads = problem.position_load[p];
        std::vector<std::vector<Partial>> next(layers + 1);
        for (int used = 0; used <= layers; ++used)
            for (const Partial& partial : fronts[used])
                for (int k = problem.min_count; used + k <= layers; ++k) {
                    const double load = k < static_cast<int>(loads.size()) ? loads[k] : kInf;
                    if (!std::isfinite(load)) continue;
                    Partial grown{partial.load + group.multiplicity[i] * load,
                                  partial.distance + std::abs(k - problem.preferred[p]), partial.counts};
                    grown.counts.push_back(k);
                    next[used + k].push_back(std::move(grown));
                }
        for (auto& front : next) {
            std::sort(front.begin(), front.end(), [](const Partial& a, const Partial& b) {
                return a.load != b.load ? a.load < b.load : a.distance < b.distance;
            });
            std::vector<Partial> kept;
            for (Partial& partial : front)
                if (kept.empty() || partial.distance < kept.back().distance) kept.push_back(std::move(partial));
            front = std::move(kept);
        }
        fronts = std::move(next);
    }
    return fronts;
}

// best[g][used]: the smallest value of `combine` over the first g groups holding `used`
// layers, where each group's value for K layers is value(g, K); choice[g][used] is that K.
template <class Value, class Combine>
std::vector<int> allocate(int groups, int layers, Value value, Combine combine, double start) {
    std::vector<std::vector<double>> best(groups + 1, std::vector<double>(layers + 1, kInf));
    std::vector<std::vector<int>> choice(groups + 1, std::vector<int>(layers + 1, -1));
    best[0][0] = start;
    for (int g = 0; g < groups; ++g)
        for (int used = 0; used <= layers; ++used) {
            if (!std::isfinite(best[g][used])) continue;
            for (int k = 0; used + k <= layers; ++k) {
                const double v = value(g, k);
                if (!std::isfinite(v)) continue;
                const double total = combine(best[g][used], v);
                if (total < best[g + 1][used + k]) {
                    best[g + 1][used + k] = total;
                    choice[g + 1][used + k] = k;
                }
            }
        }
    if (!std::isfinite(best[groups][layers])) return {};
    std::vector<int> perGroup(groups);
    for (int g = groups, used = layers; g > 0; --g) {
        perGroup[g - 1] = choice[g][used];
        used -= perGroup[g - 1];
    }
    return perGroup;
}

}  // namespace

double maxDeviceLoad(const LayerSplitProblem& problem, const std::vector<int>& counts) {
    double worst = 0;
    for (const auto& device : problem.device_positions) {
        double load = 0;
        for (int p : device) {
            const auto& loads = problem.position_load[p];
            load += counts[p] < static_cast<int>(loads.size()) ? loads[counts[p]] : kInf;
        }
        worst = std::max(worst, load);
    }
    return worst;
}

Result<LayerSplitChoice> balancedLayerSplit(const LayerSplitProblem& problem) {
    const int positions = static_cast<int>(problem.position_load.size());
    if (positions < 1 || static_cast<int>(problem.preferred.size()) != positions)
        return makeError("layer split: the loads and the preferred split must cover the same chain positions");
    auto groups = deviceGroups(problem, positions);
    if (!groups) return groups.error();
    const int count = static_cast<int>(groups->size());
    std::vector<std::vector<std::vector<Partial>>> fronts;
    for (const DeviceGroup& group : *groups) fronts.push_back(groupFronts(problem, group));

    // First the smallest maximum load: each group at its lightest way to hold K layers.
    auto lightest = [&](int g, int k) { return fronts[g][k].empty() ? kInf : fronts[g][k].front().load; };
    auto maxOf = [](double a, double b) { return std::max(a, b); };
    const std::vector<int> fastest = allocate(count, problem.layers, lightest, maxOf, 0.0);
    if (fastest.empty())
        return makeError("layer split: no split of " + std::to_string(problem.layers) + " layers over " +
                         std::to_string(positions) + " positions gives each at least " +
                         std::to_string(problem.min_count) + " layers that the cost model accepts");
    double optimum = 0;
    for (int g = 0; g < count; ++g) optimum = std::max(optimum, lightest(g, fastest[g]));

    // Then, among the splits within kTie of it, the fewest layers moved from the preferred one.
    const double limit = optimum * (1 + kTie);
    auto nearest = [&](int g, int k) {
        for (auto it = fronts[g][k].rbegin(); it != fronts[g][k].rend(); ++it)
            if (it->load <= limit) return static_cast<double>(it->distance);
        return kInf;
    };
    const std::vector<int> chosen = allocate(count, problem.layers, nearest, std::plus<double>(), 0.0);
    LayerSplitChoice out;
    out.counts.assign(positions, 0);
    for (int g = 0; g < count; ++g) {
        const auto& front = fronts[g][chosen[g]];
        auto it = front.rbegin();
        while (it->load > limit) ++it;  // exists: nearest() found it
        for (std::size_t i = 0; i < it->counts.size(); ++i) out.counts[(*groups)[g].positions[i]] = it->counts[i];
    }
    out.max_load = maxDeviceLoad(problem, out.counts);
    return out;
}

}  // namespace mario
