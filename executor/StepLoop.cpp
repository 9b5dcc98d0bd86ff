#include "executor/StepLoop.h"

#include <algorithm>

#include "core/io/LiveEvents.h"
#include "core/schedule/PipelineTopology.h"
#include "executor/DeviceWorker.h"

namespace mario::exec {

StepLoop::StepLoop(StepInputs inputs, const ExecutorOptions& options, StepReporting reporting)
    : inputs_(inputs), options_(options), reporting_(std::move(reporting)) {}

StepLoop::~StepLoop() = default;

Result<bool> StepLoop::run(RunReport& report) {
    // Instruction times of every step and every worker share this origin: one time axis.
    const auto origin = std::chrono::steady_clock::now();
    for (int iteration = 0; iteration < options_.iterations; ++iteration) {
        for (auto& st : inputs_.stages) st.reduced = st.stepped = false;
        const std::vector<WorkerSeat> seats = seat(iteration);
        std::vector<std::unique_ptr<DeviceWorker>> workers;
        for (const WorkerSeat& s : seats) {
            const bool keep = options_.snapshotGradients();
            const WorkerPlace place{s.device, s.replica, inputs_.replicas, iteration, options_.lr, options_.adam, keep};
            workers.push_back(std::make_unique<DeviceWorker>(place, inputs_.plan, inputs_.topology, inputs_.model,
                                                             s.stages, inputs_.batch, *s.transport));
            if (s.book) workers.back()->setMemoryBook(s.book, s.account);
            if (reporting_.events) workers.back()->setEventSink(reporting_.events, origin);
        }
        const auto stepStart = std::chrono::steady_clock::now();
        runWorkers(workers);
        if (auto failure = finishStep()) return makeError(*failure);
        const double stepMs =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stepStart).count();
        std::vector<WorkerMeasure> mine;
        for (std::size_t i = 0; i < workers.size(); ++i)
            mine.push_back({seats[i].device, stepMs, workers[i]->lossSum(), workers[i]->peakActivationBytes(),
                            workers[i]->peakAllocatedBytes()});
        auto measures = gather(std::move(mine));
        if (!measures) return measures.error();
        this->report(iteration, *measures, report);
    }
    return true;
}

void StepLoop::report(int iteration, const std::vector<WorkerMeasure>& measures, RunReport& report) const {
    const int devices = inputs_.topology.deviceCount();
    // The step lasts as long as its slowest process; the loss is the sum of every worker's share.
    double stepMs = 0;
    report.loss = 0;
    report.peak_activation_bytes.assign(devices, 0.0);
    std::vector<double> allocated(devices, 0.0);
    for (const WorkerMeasure& m : measures) {
        stepMs = std::max(stepMs, m.step_ms);
        report.loss += m.loss_sum;
        auto& peak = report.peak_activation_bytes[m.device];
        peak = std::max(peak, m.peak_activation_bytes);
        allocated[m.device] = std::max(allocated[m.device], m.peak_allocated_bytes);
    }
    report.step_ms.push_back(stepMs);
    report.peak_allocated_bytes.clear();
    switch (reporting_.allocatorPeaks) {
        case AllocatorPeaks::PerDevice: report.peak_allocated_bytes = allocated; break;
        case AllocatorPeaks::None: break;
    }
    if (reporting_.events && reporting_.iterationEvents)
        reporting_.events(writeLiveEvent(LiveIteration{iteration, report.loss, stepMs, report.peak_activation_bytes}));
}

}  // namespace mario::exec
