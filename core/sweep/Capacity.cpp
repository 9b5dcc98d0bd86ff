#include "core/sweep/Capacity.h"

#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

#include "core/sweep/PointRunner.h"
#include "core/tune/ParallelFor.h"
#include "core/util/HumanBytes.h"

namespace mario {
namespace {

// One scheme × pass set search over grid indices 0 … n-1 (value = min + i·step).
class Search {
public:
    Search(const CapacitySpec& spec, const PointRunner& runner, std::optional<SchemeChoice> scheme,
           std::optional<std::vector<PassId>> passes, const std::atomic<bool>* cancel)
        : spec_(spec), runner_(runner), scheme_(std::move(scheme)), passes_(std::move(passes)), cancel_(cancel),
          count_(static_cast<int>(std::floor((spec.max - spec.min) / spec.step + 1e-9)) + 1) {}

    CapacityAnswer run(CapacityAnswer answer) {
        auto good = firstValid(0, count_);
        if (!good) {
            answer.first_over = probe(0);  // its refusal says why nothing runs
            return finish(answer);
        }
        if (!fits(*good)) {
            answer.first_over = probe(*good);
            return finish(answer);
        }
        // Doubling the value from MIN, as paper_eval_lib.largest() does, then bisection.
        std::optional<int> bad;
        while (!bad) {
            int next = index(2 * value(*good));
            if (next <= *good) next = *good + 1;
            if (next >= count_) next = count_ - 1;
            if (next == *good) break;  // MAX fits
            const auto valid = firstValid(next, count_);
            if (!valid) break;  // nothing above runs: the answer is the last that does
            if (fits(*valid)) good = valid;
            else bad = valid;
        }
        while (bad && *bad - *good > 1) {
            const int mid = *good + (*bad - *good) / 2;
            const auto valid = firstValid(mid, *bad);
            if (!valid) {
                bad = mid;  // everything in [mid, bad) is refused
                continue;
            }
            if (fits(*valid)) good = valid;
            else bad = valid;
        }
        answer.largest = value(*good);
        answer.at = probe(*good);
        if (const auto over = firstValid(*good + 1, count_)) answer.first_over = probe(*over);
        else if (*good == count_ - 1) answer.reached_max = true;
        else if (!cancelled()) answer.refused_above = probe(*good + 1).refusal;
        check(answer, *good);
        return finish(answer);
    }

private:
    double value(int i) const { return spec_.min + i * spec_.step; }
    int index(double v) const { return static_cast<int>(std::floor((v - spec_.min) / spec_.step + 1e-9)); }

    const SweepPoint& probe(int i) {
        auto it = probed_.find(i);
        if (it != probed_.end()) return it->second;
        SweepPoint point = runner_.run({spec_.knob}, {KnobValue{value(i), {}}}, scheme_, passes_, cancel_);
        return probed_.emplace(i, std::move(point)).first->second;
    }
    bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
    bool fits(int i) { return probe(i).fitsMemory(); }
    // The first index in [from, to) whose config runs at all (a refused value, such as a micro-batch
    // size that does not divide the global batch, is neither a fit nor a miss).
    std::optional<int> firstValid(int from, int to) {
        for (int i = from; i < to && !cancelled(); ++i)
            if (probe(i).ok()) return i;
        return std::nullopt;
    }

    // Monotonicity, checked: every grid value below the answer simulated again must fit (a spot
    // check of MIN and the quarters, or all of them), and values above the first miss must not.
    void check(CapacityAnswer& answer, int good) {
        std::vector<int> below, above;
        const int over = answer.first_over ? index(answer.first_over->values[0].number) : count_;
        if (spec_.check == CapacitySpec::Monotonicity::Scan) {
            for (int i = 0; i < good; ++i) below.push_back(i);
            for (int i = over + 1; i < std::min(count_, 2 * over + 2); ++i) above.push_back(i);
        } else {
            for (int i : {0, good / 4, good / 2, 3 * good / 4, good - 1})
                if (i >= 0 && i < good) below.push_back(i);
            for (int i : {over + 1, 2 * over + 1})
                if (i > over && i < count_) above.push_back(i);
        }
        const std::string key(spec_.knob->key);
        for (int i : below) {
            if (cancelled()) return;
            const SweepPoint& point = probe(i);
            ++answer.checked;
            if (point.ok() && !point.fitsMemory())
                answer.violations.push_back(key + " " + KnobValue{value(i), {}}.text() + " does not fit (device " +
                                            std::to_string(point.fullest_device) + ", " + humanBytes(point.peak_bytes) +
                                            ") below the answer " + KnobValue{value(good), {}}.text());
        }
        for (int i : above) {
            if (cancelled()) return;
            const SweepPoint& point = probe(i);
            ++answer.checked;
            if (point.fitsMemory())
                answer.violations.push_back(key + " " + KnobValue{value(i), {}}.text() +
                                            " fits above the first value that does not, " +
                                            KnobValue{value(over), {}}.text());
        }
    }

    CapacityAnswer finish(CapacityAnswer& answer) {
        answer.probes = static_cast<int>(probed_.size());
        return std::move(answer);
    }

    const CapacitySpec& spec_;
    const PointRunner& runner_;
    std::optional<SchemeChoice> scheme_;
    std::optional<std::vector<PassId>> passes_;
    const std::atomic<bool>* cancel_;
    int count_;
    std::map<int, SweepPoint> probed_;
};

}  // namespace

Result<bool> parseGrow(std::string_view text, CapacitySpec& spec) {
    const std::size_t equals = text.find('=');
    auto knob = findKnob(text.substr(0, equals));
    if (!knob) return knob.error();
    if (!(*knob)->grows_memory)
        return makeError(std::string((*knob)->key) + ": does not grow memory; capacity grows one of " +
                         knobKeyList(true));
    spec.knob = *knob;
    spec.min = spec.step = 1;
    spec.max = (*knob)->limit;
    if (equals == std::string_view::npos) return true;
    const std::string_view range = text.substr(equals + 1);
    if (range.find(':') == std::string_view::npos)
        return makeError(std::string((*knob)->key) + ": --grow takes KEY or KEY=MIN:MAX[:STEP]");
    auto values = parseKnobValues(**knob, range);
    if (!values) return values.error();
    spec.min = values->front().number;
    spec.max = values->back().number;
    spec.step = values->size() > 1 ? (*values)[1].number - (*values)[0].number : 1;
    return true;
}

Result<CapacityResult> runCapacity(const CapacitySpec& spec, const std::function<void(const CapacityProgress&)>& progress,
                                   const std::atomic<bool>* cancel) {
    if (!spec.knob || !spec.knob->grows_memory)
        return makeError("capacity grows one of " + knobKeyList(true));
    if (!(spec.step > 0) || !(spec.min > 0) || spec.max < spec.min)
        return makeError(std::string(spec.knob->key) + ": the grid needs 0 < MIN <= MAX and STEP > 0");
    if (!spec.base.memory_limit_bytes && !(spec.base.hardware.memory_gb > 0))
        return makeError("memory_limit_gb: capacity needs a memory limit (or a hardware memory_gb) to fit within");
    const auto started = std::chrono::steady_clock::now();
    CapacityResult result;
    result.spec = spec;
    const PointRunner runner(spec.base);
    const int schemes = std::max<int>(1, static_cast<int>(spec.schemes.size()));
    const int passSets = std::max<int>(1, static_cast<int>(spec.pass_sets.size()));
    const int total = schemes * passSets;
    result.answers.resize(total);
    std::mutex lock;
    CapacityProgress status{0, total};
    parallelFor(total, workerThreads(spec.threads), cancel, [&](int i) {
        const int s = i / passSets, p = i % passSets;
        std::optional<SchemeChoice> scheme;
        if (!spec.schemes.empty()) scheme = spec.schemes[s];
        std::optional<std::vector<PassId>> passes;
        if (!spec.pass_sets.empty()) passes = spec.pass_sets[p];
        CapacityAnswer answer;
        answer.scheme = scheme.value_or(SchemeChoice{spec.base.parallel.scheme, spec.base.parallel.chunks});
        answer.pass_set = p;
        answer = Search(spec, runner, scheme, passes, cancel).run(std::move(answer));
        answer.passes = answer.at ? answer.at->passes : answer.first_over ? answer.first_over->passes : answer.passes;
        std::lock_guard<std::mutex> guard(lock);
        result.answers[i] = std::move(answer);
        ++status.done;
        if (progress) progress(status);
    });
    result.cancelled = cancel && cancel->load();
    result.elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return result;
}

}  // namespace mario
