#include "app/cli/AsciiGantt.h"

#include "core/schedule/CheckpointedForwards.h"

#include <algorithm>
#include <cmath>

namespace mario::cli {
namespace {

char kindLetter(Op op, bool checkpointed) {
    switch (op) {
        case Op::Forward: return checkpointed ? 'f' : 'F';
        case Op::Recompute: return 'R';
        case Op::Backward: return 'B';
        case Op::BackwardInput: return 'I';
        case Op::BackwardWeight: return 'W';
        case Op::ReduceGrad: return 'A';
        case Op::Optimizer: return 'O';
        default: return '?';
    }
}

}  // namespace

std::string renderAsciiGantt(const Plan& plan, const SimResult& result, int width) {
    const double makespan = result.makespan_ms;
    if (makespan <= 0 || width < 10) return "";
    double columnsPerMs = width / makespan;
    const double rounded = std::round(makespan);
    if (std::abs(makespan - rounded) < 1e-9 && rounded <= width) columnsPerMs = std::floor(width / rounded);
    const int columns = static_cast<int>(std::ceil(makespan * columnsPerMs - 1e-9));

    std::string text;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const auto& program = plan.devices[d].program;
        const auto& timings = result.devices[d].timings;
        const std::vector<bool> checkpointed = checkpointedForwards(program);
        std::string row(columns, '.');
        for (std::size_t i = 0; i < program.size() && i < timings.size(); ++i) {
            const Instruction& ins = program[i];
            if (!isCompute(ins.op) || timings[i].end <= timings[i].start) continue;
            const int from = static_cast<int>(std::lround(timings[i].start * columnsPerMs));
            const int to = std::min(columns, static_cast<int>(std::lround(timings[i].end * columnsPerMs)));
            const int span = to - from;
            if (span <= 0) continue;
            const char letter = kindLetter(ins.op, checkpointed[i]);
            std::string box(span, letter);
            const std::string label =
                std::string(1, letter) + (hasMicrobatch(ins.op) ? std::to_string(ins.microbatch) : "");
            if (span >= static_cast<int>(label.size()) + 2) {
                box = "[" + label + std::string(span - label.size() - 2, ' ') + "]";
            } else if (span >= static_cast<int>(label.size())) {
                box = label + std::string(span - label.size(), letter);
            }
            row.replace(from, span, box);
        }
        text += "device " + std::to_string(plan.devices[d].index);
        text += std::string(d < 10 ? 2 : 1, ' ') + "|" + row + "|\n";
    }
    text += "legend: F forward, f checkpointed forward, R recompute, B backward, I/W split backward, "
            "A all-reduce, O optimizer, . idle\n";
    return text;
}

}  // namespace mario::cli
