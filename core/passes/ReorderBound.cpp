// The bound of ReorderBound.h. Why the memory term holds, for one device d of any schedule in
// the space (docs/reorder.md#the-bound has it worked out):
//
// Its level at time t is the sum of what the operations started by t added (ProgramMemory: a
// level is a running sum over the program, and every level stays within the room). Each
// forward's share of it is never negative (F adds A kept or c checkpointed, R adds A − c, the
// backward frees A; with I and W, I frees A − G and W the weight gradients' G), so the integral
// of the level over the device's active span [first start, last end] is at least the sum of the
// shares' integrals. And what an operation frees stays unusable while it runs: nothing else
// starts on d before it ends, so the level plus what it freed stays within the room then too;
// counting the freed bytes until the freeing operation's end adds its time:
//   kept:          A from F's start to its backward's end,   ≥ A · (hold + B)
//   checkpointed:  c until R's start, A from there on,        ≥ c · (hold − R) + A · (R + B)
//   split (I, W):  B is I's time, and G while W runs,         + G · W   (either way)
// where hold = F's time + the least time from F's end to its backward's start over the chains
// of the micro-batch's own work (later stages, transfers). And the integral is at most
// room · span. The span itself holds every operation of d and every R it runs.
// So with x_i ∈ [0, 1] the share of forward i checkpointed (a relaxation of the 0/1 choice):
//   span ≥ work + Σ x_i R_i   and   Σ K_i − Σ x_i Δ_i ≤ room · span,   Δ_i = (A − c)(hold − R)
// The least recomputation that meets the memory inequality for a given span is a fractional
// knapsack (take the forwards with the most Δ per R first); it falls as the span grows, so the
// least feasible span is found by bisection. Weighing the shares by any u with Σ u ≤ 1 for
// whatever fits the room together (in place of bytes / room) gives a bound as well. The step
// is at least the earliest any operation of d can start, plus that span, plus the least work that must follow any operation of d.
#include "core/passes/ReorderBound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/passes/ExactSchedule.h"
#include "core/passes/ScheduleProblem.h"

namespace mario {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// Weightings u of the bytes held at one time, each with Σ u(item) ≤ 1 whenever the items fit
// the room together: bytes / room, and the dual-feasible functions of Fekete and Schepers
// u_k(x) = floor((k + 1) x) / k (x where (k + 1) x is whole), which count how many sets fit
// where their sizes do not divide the room (two sets of 1.7 GB in 3.5 GB leave 0.1 GB that
// no third set can use). Sizes are rounded up by 1e-9 (of the room's tolerance, Tolerance.h) so
// that rounding never raises a weight.
constexpr int kDualFeasibleFunctions = 12;
struct Share {
    double room;
    int k;  // 0: bytes / room
    double operator()(double bytes) const {
        const double x = bytes / (room * (1 + 1e-9));
        if (k == 0) return x;
        const double scaled = (k + 1) * x;
        const double whole = std::floor(scaled);
        return whole == scaled ? x : whole / k;
    }
};

// One forward of a device: bytes kept whole or checkpointed, the weight gradients a split
// backward's I leaves until W, its least hold (its time and the least gap to its backward's
// start), its R's time, its backward's (B, or I) and its W's (0 without).
struct Forward {
    double whole, checkpoint, grads, hold, recompute_ms, backward_ms, weight_ms;
};

struct Checkpointable {
    double saves;  // Δ: weight × time that checkpointing this forward saves
    double costs;  // R: the time its recomputation takes
};

// The least Σ x_i R_i with Σ x_i Δ_i ≥ need (items sorted by Δ/R, best first); infinite when
// even every forward checkpointed does not save enough.
double leastRecompute(const std::vector<Checkpointable>& items, double need) {
    double ms = 0;
    for (const auto& item : items) {
        if (need <= 0) return ms;
        if (item.saves >= need) return ms + item.costs * need / item.saves;
        need -= item.saves;
        ms += item.costs;
    }
    return need <= 0 ? ms : std::numeric_limits<double>::infinity();
}

// The least active span of a device with `work` ms of compute and these forwards, weighted by
// `u`: a lower estimate, never above the true least span (the bisection returns its
// infeasible end). Kept, a forward weighs u(whole) · (hold + backward); checkpointed
// u(checkpoint) over the hold less its R and u(whole) over the R and the backward (the
// checkpoint stands until R runs, as little of the whole as possible); a split backward's
// gradients u(grads) · W either way.
double leastSpan(double work, const std::vector<Forward>& forwards, const Share& u) {
    double held = 0;
    std::vector<Checkpointable> items;
    for (const Forward& f : forwards) {
        held += u(f.whole) * (f.hold + f.backward_ms) + u(f.grads) * f.weight_ms;
        const double saves = (u(f.whole) - u(f.checkpoint)) * (f.hold - f.recompute_ms);
        if (saves > 0) items.push_back({saves, f.recompute_ms});
    }
    std::sort(items.begin(), items.end(),
              [](const Checkpointable& a, const Checkpointable& b) { return a.saves * b.costs > b.saves * a.costs; });
    auto feasible = [&](double span) { return span - work >= leastRecompute(items, held - span); };
    if (feasible(work)) return work;
    double saves = 0, costs = 0;
    for (const auto& item : items) saves += item.saves, costs += item.costs;
    double lo = work, hi = std::max(work + costs, held - saves);
    hi = std::max(hi, lo) * (1 + 1e-12) + 1e-12;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = lo + (hi - lo) / 2;
        (feasible(mid) ? hi : lo) = mid;
    }
    return lo;
}

// The warm-up term: one forward of a device as the fill argument sees it. `later` is the least
// time it costs after a backward if it is neither finished with nor kept whole then (run late,
// or checkpointed and recomputed: min(F, R); a checkpoint's bytes are left out, which only
// lowers the bound); `backward` its B (or I) and W.
struct Fill {
    double whole, later, backward;
};

// How many whole sets fit `room` (at most `most`), rounding in favour of fitting: a bound may
// only err low.
int setsThatFit(double room, double whole, int most) {
    if (!(whole > 0)) return most;
    return static_cast<int>(std::clamp<double>(std::floor(room * (1 + 1e-9) / whole), 0, most));
}

// The warm-up term of a device (docs/reorder.md#the-bound): take the start τ of its j-th backward
// (B or I) in any schedule. Before τ, j − 1 backwards ran (set D, their forwards freed); every
// other forward started before τ is held whole or as a checkpoint, and what is held whole fits
// the room. From τ on, the device runs, one after another, the other backwards and their Ws,
// every forward not started and every R not yet run; then at least `last` ms follow. And τ is
// no earlier than the j-th earliest release of its backwards. So, the checkpoints' bytes left
// out, with k_g forwards of kind g kept and d_g in D,
//   step ≥ release_j + Σ backward + Σ later − max Σ_g [d_g (backward_g + later_g) + k_g later_g]
//   over Σ d_g = j − 1, d_g + k_g ≤ n_g, Σ k_g whole_g ≤ room.
// Forwards of a kind (a stage) are alike; with one or two kinds the maximum is exact, with more
// the coupling d_g + k_g ≤ n_g is dropped (a larger maximum: still a bound).
double warmupTerm(const std::vector<Fill>& forwards, std::vector<double> releases, double room, double last) {
    struct Kind {
        Fill fill;
        int count;
    };
    std::vector<Kind> kinds;
    double base = 0;
    for (const Fill& f : forwards) {
        base += f.backward + f.later;
        auto same = std::find_if(kinds.begin(), kinds.end(), [&](const Kind& k) {
            return k.fill.whole == f.whole && k.fill.later == f.later && k.fill.backward == f.backward;
        });
        if (same == kinds.end()) kinds.push_back({f, 1});
        else ++same->count;
    }
    std::sort(releases.begin(), releases.end());
    const int n = static_cast<int>(std::min(forwards.size(), releases.size()));
    double best = kNone;
    for (int j = 1; j <= n; ++j) {
        const int done = j - 1;
        double gain = kNone;
        if (kinds.size() <= 2) {
            const Kind& a = kinds[0];
            const Kind none{{0, 0, 0}, 0};
            const Kind& b = kinds.size() == 2 ? kinds[1] : none;
            for (int da = std::max(0, done - b.count); da <= std::min(done, a.count); ++da) {
                const int db = done - da;
                const int ca = a.count - da, cb = b.count - db;
                const double freed = da * (a.fill.backward + a.fill.later) + db * (b.fill.backward + b.fill.later);
                if (ca * a.fill.whole + cb * b.fill.whole <= room) {  // every other forward kept
                    gain = std::max(gain, freed + ca * a.fill.later + cb * b.fill.later);
                    continue;
                }
                const int mostA = setsThatFit(room, a.fill.whole, ca);
                for (int ka = 0; ka <= mostA; ++ka) {
                    const int kb = setsThatFit(room - ka * a.fill.whole, b.fill.whole, cb);
                    gain = std::max(gain, freed + ka * a.fill.later + kb * b.fill.later);
                }
            }
        } else {
            // D: the j − 1 largest backward + later; kept: the most later per byte, fractionally.
            std::vector<double> freed;
            for (const Kind& k : kinds) freed.insert(freed.end(), k.count, k.fill.backward + k.fill.later);
            std::sort(freed.rbegin(), freed.rend());
            gain = 0;
            for (int i = 0; i < done; ++i) gain += freed[i];
            std::vector<Kind> byDensity = kinds;
            std::sort(byDensity.begin(), byDensity.end(), [](const Kind& x, const Kind& y) {
                return x.fill.later * y.fill.whole > y.fill.later * x.fill.whole;
            });
            double left = room * (1 + 1e-9), slots = n - done;
            for (const Kind& k : byDensity) {
                const double take = std::min<double>(
                    {static_cast<double>(k.count), slots, k.fill.whole > 0 ? left / k.fill.whole : slots});
                if (take <= 0) continue;
                gain += take * k.fill.later;
                left -= take * k.fill.whole;
                slots -= take;
            }
        }
        best = std::max(best, releases[j - 1] + base - gain + last);
    }
    return best;
}

}  // namespace

Result<ReorderBound> reorderBound(const Plan& plan, const std::vector<double>& budget) {
    auto problem = ScheduleProblem::fromPlan(plan, budget);
    if (!problem) return problem.error();
    const auto& ops = problem->ops();
    const int devices = problem->deviceCount();
    const int n = static_cast<int>(ops.size());

    ReorderBound out;
    ExactOptions rootOnly;
    rootOnly.node_budget = 0;  // the root's bound, no search
    auto root = exactSchedule(plan, budget, rootOnly);
    if (!root) return root.error();
    out.order_ms = root->root_bound;
    out.bound_ms = out.order_ms;

    // The operations every schedule has (Rs are optional), in an order where inputs come first.
    std::vector<int> indegree(n, 0), topo;
    for (int i = 0; i < n; ++i)
        if (ops[i].instruction.op != Op::Recompute) indegree[i] = static_cast<int>(ops[i].inputs.size());
    for (int i = 0; i < n; ++i)
        if (ops[i].instruction.op != Op::Recompute && !indegree[i]) topo.push_back(i);
    for (std::size_t k = 0; k < topo.size(); ++k)
        for (int c : ops[topo[k]].consumers)
            if (ops[c].instruction.op != Op::Recompute && --indegree[c] == 0) topo.push_back(c);

    // Earliest start (inputs only) and least work after the end (consumers, the device's syncs).
    std::vector<double> head(n, 0.0), tail(n, 0.0);
    for (int i : topo)
        for (const auto& input : ops[i].inputs)
            head[i] = std::max(head[i], head[input.op] + ops[input.op].ms + input.lag);
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
        const int i = *it;
        tail[i] = problem->tailMs(ops[i].device);
        for (int c : ops[i].consumers) {
            if (ops[c].instruction.op == Op::Recompute) continue;
            for (const auto& input : ops[c].inputs)
                if (input.op == i) tail[i] = std::max(tail[i], input.lag + ops[c].ms + tail[c]);
        }
    }

    // A micro-batch's operations, in topological order: every chain from a forward to its
    // backward stays within its micro-batch.
    std::map<int, std::vector<int>> ofMicrobatch;
    for (int i : topo) ofMicrobatch[ops[i].instruction.microbatch].push_back(i);
    std::vector<int> backwardOf(n, -1), weightOf(n, -1);
    for (int i = 0; i < n; ++i) {
        if (isBackwardStart(ops[i].instruction.op)) backwardOf[ops[i].forward] = i;
        if (ops[i].instruction.op == Op::BackwardWeight) weightOf[ops[i].inputs.front().op] = i;
    }
    std::vector<double> end(n, kNone);
    // The least time from forward f's end to its backward's start.
    auto leastGap = [&](int f) {
        const auto& list = ofMicrobatch[ops[f].instruction.microbatch];
        for (int i : list) end[i] = kNone;
        end[f] = 0;
        double gap = 0;
        for (int i : list) {
            if (i == f) continue;
            double start = kNone;
            for (const auto& input : ops[i].inputs)
                if (end[input.op] > kNone) start = std::max(start, end[input.op] + input.lag);
            if (start == kNone) continue;
            end[i] = start + ops[i].ms;
            if (i == backwardOf[f]) gap = start;
        }
        return gap;
    };

    out.forced_recompute_ms.assign(devices, 0.0);
    out.device_ms.assign(devices, 0.0);
    std::vector<double> work(devices, 0.0), first(devices, kNone), last(devices, kNone);
    std::vector<std::vector<Forward>> forwards(devices);
    std::vector<std::vector<Fill>> fills(devices);
    std::vector<std::vector<double>> releases(devices);
    std::vector<char> modelled(devices, 1);
    for (int i : topo) {
        const ScheduleOp& op = ops[i];
        const int d = op.device;
        work[d] += op.ms;
        first[d] = first[d] == kNone ? head[i] : std::min(first[d], head[i]);
        last[d] = last[d] == kNone ? tail[i] : std::min(last[d], tail[i]);
        if (isBackwardStart(op.instruction.op)) releases[d].push_back(head[i]);
        if (op.instruction.op != Op::Forward) continue;
        const int b = backwardOf[i];
        Forward f{op.bytes, op.checkpointed_bytes, 0, op.ms + leastGap(i), ops[op.recompute].ms, ops[b].ms, 0};
        if (const int w = weightOf[b]; w >= 0) {
            f.grads = -ops[w].bytes;
            f.weight_ms = ops[w].ms;
        }
        // Shares that could go negative would break the argument: such a device gets no memory term.
        if (!(f.checkpoint >= 0 && f.whole >= f.checkpoint && f.grads >= 0 && f.grads <= f.whole)) modelled[d] = 0;
        forwards[d].push_back(f);
        fills[d].push_back({f.whole, std::min(op.ms, f.recompute_ms), f.backward_ms + f.weight_ms});
    }
    for (int d = 0; d < devices; ++d) {
        if (first[d] == kNone) continue;
        double span = work[d];
        if (modelled[d] && problem->room(d) > 0)
            for (int k = 0; k <= kDualFeasibleFunctions; ++k)
                span = std::max(span, leastSpan(work[d], forwards[d], Share{problem->room(d), k}));
        out.forced_recompute_ms[d] = span - work[d];
        out.device_ms[d] = first[d] + span + last[d];
        if (modelled[d] && !fills[d].empty()) {
            // Where the warm-up term is the larger, what the room adds to it (against a room
            // without limit) is the work the budget forces: forwards recomputed or held back
            // past a backward.
            const double warmup = warmupTerm(fills[d], releases[d], problem->room(d), last[d]);
            if (warmup > out.device_ms[d]) {
                const double free = warmupTerm(fills[d], releases[d], std::numeric_limits<double>::infinity(), last[d]);
                out.forced_recompute_ms[d] = std::max(out.forced_recompute_ms[d], warmup - free);
                out.device_ms[d] = warmup;
            }
        }
        // Rounding alone (the same sums in another order) does not name a device.
        if (out.device_ms[d] > out.bound_ms && out.device_ms[d] > out.order_ms * (1 + 1e-9)) {
            out.bound_ms = out.device_ms[d];
            out.device = d;
        }
    }
    return out;
}

}  // namespace mario
