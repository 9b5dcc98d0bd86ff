#pragma once
// The torchtitan settings that run an exported pipelining CSV: the command-line overrides of
// torchtitan's `ParallelismConfig` and `TrainingConfig` (torchtitan 0.3's dataclass configs,
// `--section.field=value`), written beside the CSV by `mario export --csv` (docs/pytorch.md).
//
// With `pipeline_parallel_schedule_csv` set, torchtitan runs the file with PyTorch's
// `_PipelineScheduleRuntime`, loading it as compute-only, whatever schedule is named. The
// named schedule still decides how torchtitan builds its stages, and the CSV only runs if
// that matches the plan's placement:
//  - how many stages a rank holds: single-stage classes (GPipe, 1F1B) one, multi-stage
//    classes two unless `pipeline_parallel_layers_per_stage` gives another count, as
//    ceil((layers + first_less + last_less) / layers_per_stage) stages in all;
//  - which: ZBVZeroBubble and DualPipeV place rank r's two stages in a V (r and 2P-1-r),
//    every other class loops (r, r+P, r+2P, ...);
//  - how many micro-batches: training.local_batch_size / pipeline_parallel_microbatch_size.
// So the class is chosen from the plan's placement, named after its scheme where PyTorch has
// that scheme (ZB-H1 and ZB-H2 have no class of their own: 1F1B builds their stages).
#include <string>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct TorchtitanSettings {
    std::string schedule;      // parallelism.pipeline_parallel_schedule
    int pipeline_degree = 1;   // parallelism.pipeline_parallel_degree
    int stages_per_rank = 1;   // what torchtitan must build (for the notes)
    int layers_per_stage = 0;  // parallelism.pipeline_parallel_layers_per_stage; 0: not set
    // parallelism.pipeline_parallel_first/last_stage_less_layers: how many layers the embedding
    // and the head count as when torchtitan deals layers to stages (its default 1, written only
    // when another value makes its split the plan's).
    int first_stage_less_layers = 1;
    int last_stage_less_layers = 1;
    int microbatch_size = 1;         // parallelism.pipeline_parallel_microbatch_size
    int local_batch_size = 1;        // training.local_batch_size = micro-batches x micro-batch size
    std::vector<std::string> notes;  // what the user must still match by hand

    // One `--section.field=value` per entry, the CSV path last.
    std::vector<std::string> overrides(const std::string& csvPath) const;
};

// Fails, in one sentence, for a placement torchtitan cannot build (stages neither looped nor
// in a V, or a V with other than two stages per rank) and for plans export refuses anyway.
Result<TorchtitanSettings> torchtitanSettings(const Plan& plan);

// The file written beside the CSV: '#' comments saying how to use it, then overrides() one per
// line, so `$(grep -v '^#' FILE)` appends them to a torchtitan command line.
std::string torchtitanArgsFile(const TorchtitanSettings& settings, const std::string& csvPath);

// "schedule.csv" -> "schedule.torchtitan.args": the file beside the CSV.
std::string torchtitanArgsPath(const std::string& csvPath);

}  // namespace mario
