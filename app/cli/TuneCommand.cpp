// `mario tune CONFIG [--devices N] [--memory 40G] [--threads K] [--top K] [--tp] [--json]
//                    [--schemes LIST] [--pp N|MIN-MAX] [--micro-batch-sizes LIST] [--passes LIST]
//                    [-o best.mario.json] [--export DIR] [--progress-every SECONDS]`
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "app/cli/Arguments.h"
#include "app/cli/Commands.h"
#include "core/io/ConfigJson.h"
#include "core/io/PlanJson.h"
#include "core/io/PresetLibrary.h"
#include "core/model/Limits.h"
#include "core/passes/PassVocabulary.h"
#include "core/tune/CandidateExport.h"
#include "core/tune/TuneVerdict.h"
#include "core/tune/Tuner.h"
#include "core/util/WholeNumber.h"

namespace mario::cli {
namespace {

// "40G", "40GB", "40 gb", "80000M", "1.5T"; a bare number is GB.
std::optional<double> parseMemory(const std::string& text) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !(value > 0) || !std::isfinite(value)) return std::nullopt;
    std::string unit(end);
    std::erase(unit, ' ');
    for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    double bytes = 0;
    if (unit.empty() || unit == "G" || unit == "GB") bytes = value * 1e9;
    else if (unit == "M" || unit == "MB") bytes = value * 1e6;
    else if (unit == "T" || unit == "TB") bytes = value * 1e12;
    if (!(bytes > 0 && bytes <= limits::kMaxMemoryBytes)) return std::nullopt;
    return bytes;
}

nlohmann::json outcomeJson(const TuneOutcome& o) {
    const TuneCandidate& c = o.candidate;
    return {{"label", c.label()},
            {"scheme", std::string(schemeName(c.scheme))},
            {"chunks", c.chunks},
            {"pp", c.pp},
            {"dp", c.dp},
            {"tp", c.tp},
            {"micro_batch_size", c.micro_batch_size},
            {"checkpoint", c.checkpoint},
            {"feasible", o.feasible},
            {"samples_per_s", o.samples_per_s},
            {"tokens_per_s", o.tokens_per_s},
            {"step_ms", o.step_ms},
            {"mfu", o.mfu > 0 ? nlohmann::json(o.mfu) : nlohmann::json(nullptr)},
            {"bubble_ratio", o.bubble_ratio},
            {"peak_memory_bytes", o.peak_bytes},
            {"rejection", o.rejection}};
}

void printTable(const TuneResult& result, int top) {
    std::printf("%4s  %-50s %11s %12s %10s %6s %9s %7s\n", "rank", "candidate", "samples/s", "tokens/s", "step ms",
                "MFU", "peak GB", "bubble");
    int rank = 0;
    for (int i : result.ranking) {
        if (rank >= top) break;
        const TuneOutcome& o = result.outcomes[i];
        std::printf("%4d  %-50s %11.2f %12.0f %10.1f %5.1f%% %9.2f %6.1f%%\n", ++rank, o.candidate.label().c_str(),
                    o.samples_per_s, o.tokens_per_s, o.step_ms, 100 * o.mfu, o.peak_bytes / 1e9, 100 * o.bubble_ratio);
    }
}

std::vector<std::string> commaSeparated(const std::string& text) {
    std::vector<std::string> parts;
    std::size_t from = 0;
    for (std::size_t comma; (comma = text.find(',', from)) != std::string::npos; from = comma + 1)
        parts.push_back(text.substr(from, comma - from));
    parts.push_back(text.substr(from));
    return parts;
}

// --schemes 1f1b,zbv  --pp 4 or 4-16  --micro-batch-sizes 1,2,4  --passes all: narrow the search.
std::optional<CliError> readFilters(const Arguments& parsed, TuneOptions& options) {
    if (auto text = parsed.value("schemes")) {
        options.schemes.clear();
        for (const std::string& name : commaSeparated(*text)) {
            auto scheme = parseScheme(name);
            if (!scheme)
                return CliError{kBadInput,
                                "--schemes: unknown scheme \"" + name + "\" (expected " + schemeNameList() + ")"};
            options.schemes.push_back(*scheme);
        }
    }
    if (auto text = parsed.value("pp")) {
        const std::size_t dash = text->find('-');
        auto low = wholeNumberIn(text->substr(0, dash), 1, limits::kMaxPipelineDevices);
        auto high =
            dash == std::string::npos ? low : wholeNumberIn(text->substr(dash + 1), 1, limits::kMaxPipelineDevices);
        if (!low || !high || *high < *low)
            return CliError{kBadInput, "--pp: expected a depth or a range like 4-16 within [1, " +
                                           std::to_string(limits::kMaxPipelineDevices) + "], got \"" + *text + "\""};
        options.min_pp = *low;
        options.max_pp = *high;
    }
    if (auto text = parsed.value("micro-batch-sizes")) {
        for (const std::string& part : commaSeparated(*text)) {
            auto size = wholeNumberIn(part, 1, limits::kMaxMicroBatchSize);
            if (!size)
                return CliError{kBadInput, "--micro-batch-sizes: expected sizes in [1, " +
                                               std::to_string(limits::kMaxMicroBatchSize) + "], got \"" + part + "\""};
            options.micro_batch_sizes.push_back(*size);
        }
    }
    // The passes of the "+mario" candidates: the pass list of every other command ("all", "none",
    // names); Tuner::checkOptions says what a list the tuner cannot use lacks.
    if (auto text = parsed.value("passes")) {
        auto passes = parsePassList(*text);
        if (!passes) return CliError{kBadInput, "--passes: " + passes.error().message};
        options.passes = std::move(*passes);
    }
    return std::nullopt;
}

// The best candidate of each scheme, in ranking order: what a user asks when comparing schemes.
std::vector<int> bestPerScheme(const TuneResult& result) {
    std::vector<int> best;
    std::set<Scheme> seen;
    for (int i : result.ranking)
        if (seen.insert(result.outcomes[i].candidate.scheme).second) best.push_back(i);
    return best;
}

}  // namespace

int tuneCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(
            args,
            {"devices", "memory", "threads", "top", "output", "export", "schemes", "pp", "micro-batch-sizes", "passes",
             "progress-every"},
            {"json", "tp"}, parsed, {{"o", "output"}}))
        return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "tune needs exactly one CONFIG");
    auto presets = PresetLibrary::locate(executable);
    if (!presets) return fail(kBadInput, presets.error().message);
    auto config = readConfigFile(parsed.positional()[0], *presets);
    if (!config) return fail(kBadInput, config.error().message);

    TuneOptions options;
    options.devices = config->parallel.pp * config->parallel.dp * config->parallel.tp;
    if (auto error = parsed.integerIn("devices", 2, limits::kMaxDevices, options.devices))
        return fail(error->code, error->message);
    if (auto text = parsed.value("memory")) {
        auto memory = parseMemory(*text);
        if (!memory) return fail(kBadInput, "--memory: expected a size like 40G or 80GB, got \"" + *text + "\"");
        options.memory_limit_bytes = *memory;
    }
    if (auto error = parsed.integerIn("threads", 1, limits::kMaxThreads, options.threads))
        return fail(error->code, error->message);
    int top = 10;
    if (auto error = parsed.integerIn("top", 1, limits::kMaxTop, top)) return fail(error->code, error->message);
    if (parsed.has("tp")) options.tensor_parallel = tensorParallelWithinNode();
    if (auto error = readFilters(parsed, options)) return fail(error->code, error->message);
    if (auto ok = Tuner::checkOptions(*config, options); !ok) return fail(kBadInput, ok.error().message);

    // A progress bar on a terminal; elsewhere (logs, pipes, --json) a plain line on stderr every
    // --progress-every seconds (5), so a long search is never silent (a 65,536-device search ran
    // 372 s without a word) while a short one prints nothing but its result.
    const bool bar = !parsed.has("json") && isatty(STDERR_FILENO);
    double progressEvery = 5;
    if (auto error = parsed.numberIn("progress-every", 0, limits::kMaxProgressEverySeconds, progressEvery))
        return fail(error->code, error->message);
    const auto started = std::chrono::steady_clock::now();
    double lastLine = 0;
    // The search space's size, so that refining (the best few again) is counted apart from it:
    // "410 candidates, refining the best 3/8", never "413/418 candidates".
    int candidates = 0;
    TuneProgress latest;
    bool latestShown = true;
    // Seconds with as many decimals as the interval has, so that successive lines never read the same.
    const int decimals = progressEvery >= 1 ? 0 : std::min(3, static_cast<int>(std::ceil(-std::log10(progressEvery))));
    auto progressLine = [&](const TuneProgress& p, double now) {
        if (p.refining)
            std::fprintf(stderr, "tune: %d candidates, refining the best: %d/%d after %.*f s, best %.2f samples/s\n",
                         candidates, p.evaluated - candidates, p.total - candidates, decimals, now,
                         p.best_samples_per_s);
        else
            std::fprintf(stderr, "tune: %d/%d candidates after %.*f s, best %.2f samples/s\n", p.evaluated, p.total,
                         decimals, now, p.best_samples_per_s);
    };
    auto result = Tuner::run(*config, options, [&](const TuneProgress& p, const TuneOutcome&) {
        if (!p.refining) candidates = p.total;
        if (!bar) {
            const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            latest = p;
            latestShown = now - lastLine >= progressEvery;
            if (!latestShown) return;
            lastLine = now;
            progressLine(p, now);
            return;
        }
        if (p.evaluated % 8 != 0 && p.evaluated != p.total) return;
        const int width = 30, filled = width * p.evaluated / std::max(1, p.total);
        if (p.refining)
            std::fprintf(stderr, "\r[%s%s] %d candidates, refining the best %d/%d, best %.2f samples/s",
                         std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(), candidates,
                         p.evaluated - candidates, p.total - candidates, p.best_samples_per_s);
        else
            std::fprintf(stderr, "\r[%s%s] %d/%d candidates, best %.2f samples/s", std::string(filled, '#').c_str(),
                         std::string(width - filled, ' ').c_str(), p.evaluated, p.total, p.best_samples_per_s);
    });
    if (bar) std::fprintf(stderr, "\n");
    // A log that showed the search going ends with where it ended: every candidate, and the
    // refined ones when there were any.
    if (!bar && lastLine > 0 && !latestShown)
        progressLine(latest, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (!result) return fail(kBadInput, result.error().message);

    const double simsPerSecond = result->elapsed_ms > 0 ? 1000.0 * result->simulated / result->elapsed_ms : 0;
    if (parsed.has("json")) {
        nlohmann::json ranking = nlohmann::json::array(), pareto = nlohmann::json::array();
        for (int k = 0; k < std::min<int>(top, result->ranking.size()); ++k)
            ranking.push_back(outcomeJson(result->outcomes[result->ranking[k]]));
        for (int i : result->pareto) pareto.push_back(outcomeJson(result->outcomes[i]));
        nlohmann::json perScheme = nlohmann::json::array();
        for (int i : bestPerScheme(*result)) perScheme.push_back(outcomeJson(result->outcomes[i]));
        nlohmann::json out = {
            {"candidates", result->outcomes.size()},
            {"simulated", result->simulated},
            {"pruned", result->pruned},
            {"refined", result->refined},
            {"elapsed_ms", result->elapsed_ms},
            {"simulations_per_s", simsPerSecond},
            {"ranking", ranking},
            {"pareto", pareto},
            {"best_per_scheme", perScheme},
            // null unless both a checkpointed and an unchecked candidate fit
            {"speedup_over_no_checkpointing", result->speedup_over_no_checkpointing > 0
                                                  ? nlohmann::json(result->speedup_over_no_checkpointing)
                                                  : nlohmann::json(nullptr)},
            {"nothing_fits", result->nothing_fits}};
        if (result->best) out["best"] = outcomeJson(result->outcomes[*result->best]);
        std::cout << out.dump(2) << "\n";
    } else {
        // Each candidate counted once (simulated, pruned or refused before simulating); the
        // refined ones are the best of them again, not more candidates.
        const int candidateCount = static_cast<int>(result->outcomes.size());
        const int simulatedOnce = result->simulated - result->refined;
        const int refused = candidateCount - simulatedOnce - result->pruned;
        std::printf("%d candidates: %d simulated, %d pruned by the memory bound", candidateCount, simulatedOnce,
                    result->pruned);
        if (refused > 0) std::printf(", %d refused", refused);
        if (result->refined > 0) std::printf("; the best %d simulated again with every pass", result->refined);
        std::printf("; %d simulations in %.0f ms (%.0f simulations/s)\n\n", result->simulated, result->elapsed_ms,
                    simsPerSecond);
        printTable(*result, top);
        const std::vector<int> perScheme = bestPerScheme(*result);
        if (perScheme.size() > 1) {
            std::printf("\nbest of each scheme:\n");
            for (int i : perScheme) {
                const TuneOutcome& o = result->outcomes[i];
                std::printf("      %-50s %11.2f samples/s %10.1f ms  MFU %4.1f%%  %6.2f GB\n",
                            o.candidate.label().c_str(), o.samples_per_s, o.step_ms, 100 * o.mfu, o.peak_bytes / 1e9);
            }
        }
        if (result->best) std::printf("\n%s\n", tuneVerdict(*result).c_str());
    }
    if (!result->best) return fail(kNothingFits, result->nothing_fits);

    const TuneCandidate& winner = result->outcomes[*result->best].candidate;
    auto plan = Tuner::planFor(*config, winner, options);
    if (!plan) return fail(kBadInput, plan.error().message);
    if (auto out = parsed.value("output")) {
        if (auto written = writePlanFile(*plan, *out); !written) return fail(kBadInput, written.error().message);
        if (!parsed.has("json")) std::printf("wrote %s\n", out->c_str());
    }
    if (auto dir = parsed.value("export")) {
        auto written = writeCandidateBundle(*dir, *config, winner, options);
        if (!written) return fail(kBadInput, written.error().message);
        if (!parsed.has("json")) std::printf("wrote the launch bundle to %s (%s)\n", dir->c_str(), written->c_str());
    }
    return kOk;
}

}  // namespace mario::cli
