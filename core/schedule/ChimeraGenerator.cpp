// Chimera ("X", Li & Hoefler, SC'21): two pipelines over the same devices in opposite
// directions. The order comes from a list scheduler over the stage costs: whenever a device
// can start something, it takes the earliest-startable task; on a tie a forward goes first
// (the one furthest along its chain, keeping the other direction fed), then the backward
// nearest the chain's start. Each stage keeps at most (chain length − position) forwards in
// flight, as 1F1B does, which bounds memory. Against backward-first, this ordering gives the
// same makespans when F = B and 10% shorter ones when B = 2F with N = 2D. For N = D
// micro-batches and equal forward/backward costs this reproduces the paper's bubble ratio
// (D − 2)/(2N + D − 2) and its activation range [D/2 + 1, D] micro-batches.
#include <algorithm>
#include <limits>
#include <tuple>

#include "core/schedule/Generators.h"

namespace mario {
namespace {

struct Task {
    Instruction instruction;
    int position = 0;  // in its chain
    double ready = 0;  // when its input is available
};

}  // namespace

ComputeOrder generateChimera(int devices, int microbatches, double forwardCost, double backwardCost) {
    const int p = devices;
    const ScheduleShape shape{Scheme::Chimera, p, 1, microbatches};
    const PipelineLayout layout = pipelineLayout(shape);
    // Alternate directions in blocks of p/2 micro-batches (Chimera's basic unit), or half of
    // the micro-batches when there are fewer than p.
    const int block = std::max(1, microbatches < p ? microbatches / 2 : p / 2);
    auto chainOf = [&](int m) { return (m / block) % 2; };

    std::vector<std::vector<Task>> ready(p);  // per device, tasks whose input is available
    std::vector<int> inFlight(2 * p, 0);
    std::vector<double> deviceFree(p, 0.0);
    // Every micro-batch's first forward is ready at 0, but only each chain's lowest waiting one
    // stands in `ready`: the others have the same key but for a higher micro-batch, so they
    // never win before it, and the next comes in when it starts. (All of them in `ready` made
    // the scan quadratic: a third of the window's preparation at 32 × 2048, issue 45.) Keys
    // differ in their micro-batch, stage or kind, so the order of `ready` decides nothing.
    std::vector<std::vector<int>> waiting(2);  // per chain, its micro-batches, latest first
    for (int m = microbatches - 1; m >= 0; --m) waiting[chainOf(m)].push_back(m);
    auto admitNext = [&](int chain) {
        if (waiting[chain].empty()) return;
        const int stage = layout.chains[chain][0];
        ready[layout.stage_device[stage]].push_back({{Op::Forward, stage, waiting[chain].back()}, 0, 0.0});
        waiting[chain].pop_back();
    };
    admitNext(0);
    admitNext(1);

    ComputeOrder order(p);
    const int totalTasks = 2 * p * microbatches;
    for (int done = 0; done < totalTasks; ++done) {
        // Pick (device, task) minimising (start, forward first, position preference, micro-batch).
        int bestDevice = -1;
        std::size_t bestTask = 0;
        std::tuple<double, int, int, int> bestKey{std::numeric_limits<double>::infinity(), 0, 0, 0};
        // The in-flight cap is a preference: should it ever block every task, it is lifted.
        for (int pass = 0; pass < 2 && bestDevice < 0; ++pass)
            for (int d = 0; d < p; ++d) {
                for (std::size_t t = 0; t < ready[d].size(); ++t) {
                    const Task& task = ready[d][t];
                    const bool forward = task.instruction.op == Op::Forward;
                    const int chainLength = p;
                    if (pass == 0 && forward && inFlight[task.instruction.stage] >= chainLength - task.position)
                        continue;
                    const std::tuple<double, int, int, int> key{std::max(deviceFree[d], task.ready), forward ? 0 : 1,
                                                                forward ? -task.position : task.position,
                                                                task.instruction.microbatch};
                    // The first candidate always counts: costs near the largest double make
                    // every start infinite, and nothing is below infinity (issue 30's fuzzing).
                    if (bestDevice < 0 || key < bestKey) {
                        bestKey = key;
                        bestDevice = d;
                        bestTask = t;
                    }
                }
            }
        const Task task = ready[bestDevice][bestTask];
        ready[bestDevice].erase(ready[bestDevice].begin() + static_cast<std::ptrdiff_t>(bestTask));
        const Instruction& ins = task.instruction;
        const bool forward = ins.op == Op::Forward;
        const double end = std::get<0>(bestKey) + (forward ? forwardCost : backwardCost);
        deviceFree[bestDevice] = end;
        order[bestDevice].push_back(ins);

        const auto& chain = layout.chains[chainOf(ins.microbatch)];
        if (forward && task.position == 0) admitNext(chainOf(ins.microbatch));
        if (forward) {
            ++inFlight[ins.stage];
            if (task.position + 1 < p) {
                const int next = chain[task.position + 1];
                ready[layout.stage_device[next]].push_back(
                    {{Op::Forward, next, ins.microbatch}, task.position + 1, end});
            } else {
                ready[bestDevice].push_back({{Op::Backward, ins.stage, ins.microbatch}, task.position, end});
            }
        } else {
            --inFlight[ins.stage];
            if (task.position > 0) {
                const int previous = chain[task.position - 1];
                ready[layout.stage_device[previous]].push_back(
                    {{Op::Backward, previous, ins.microbatch}, task.position - 1, end});
            }
        }
    }
    return order;
}

}  // namespace mario
