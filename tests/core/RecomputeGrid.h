#pragma once
// Issue 11's public grid, the configurations tests/bench/recompute_grid.py reports: GPT-3 1.6B
// and LLaMA-2 3B on A100-40G; 4 and 8 devices; m = PP, 2·PP and 4·PP micro-batches of size 1;
// analytical costs; the schemes of one set (`--schemes` there):
//   paper        1F1B, Chimera and interleaved (2 chunks), the paper's own;
//   zero-bubble  the split-backward schedules: zb-h1, zbv, dualpipev and interleaved-zb (2 chunks);
//   remaining    every other scheme Mario generates: gpipe, bfs (2 chunks), zb-h2 and dualpipe.
// Configurations a scheme refuses are left out (dualpipe and dualpipev need at least 2·PP
// micro-batches). One place builds it for the grid tests and the memory-sweep benchmark.
#include <string>
#include <vector>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/session/PlanBuilder.h"
#include "core/util/Result.h"

namespace mario::test {

enum class GridSchemes { Paper, ZeroBubble, Remaining };

inline std::vector<std::string> gridSchemes(GridSchemes set) {
    switch (set) {
        case GridSchemes::ZeroBubble: return {"zb-h1", "zbv", "dualpipev", "interleaved-zb"};
        case GridSchemes::Remaining: return {"gpipe", "bfs", "zb-h2", "dualpipe"};
        case GridSchemes::Paper: break;
    }
    return {"1f1b", "chimera", "interleaved"};
}

struct GridPlan {
    std::string name;  // "llama2-3b chimera 8x8"
    Plan plan;
};

// `profiles`: the repository's profiles/ folder. Fails on the first configuration that does not build.
inline Result<std::vector<GridPlan>> recomputeGrid(const std::string& profiles, GridSchemes set = GridSchemes::Paper) {
    const PresetLibrary presets(profiles);
    std::vector<GridPlan> grid;
    for (const char* model : {"gpt3-1.6b", "llama2-3b"})
        for (const std::string& scheme : gridSchemes(set))
            for (int pp : {4, 8})
                for (int m : {pp, 2 * pp, 4 * pp}) {
                    if ((scheme == "dualpipev" || scheme == "dualpipe") && m < 2 * pp) continue;
                    const std::string name =
                        std::string(model) + " " + scheme + " " + std::to_string(pp) + "x" + std::to_string(m);
                    nlohmann::json parallel = {
                        {"scheme", scheme},      {"pp", pp}, {"dp", 1}, {"tp", 1}, {"micro_batch_size", 1},
                        {"global_batch_size", m}};
                    if (scheme == "interleaved" || scheme == "interleaved-zb" || scheme == "bfs")
                        parallel["chunks"] = 2;
                    const nlohmann::json json = {{"format", "mario-config"}, {"version", 1},  {"model", model},
                                                 {"hardware", "a100-40g"},   {"devices", pp}, {"parallel", parallel}};
                    auto config = readConfig(json, presets);
                    if (!config) return makeError(name + ": " + config.error().message);
                    auto plan = buildPlan(*config);
                    if (!plan) return makeError(name + ": " + plan.error().message);
                    grid.push_back({name, std::move(*plan)});
                }
    return grid;
}

}  // namespace mario::test
