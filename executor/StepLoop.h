#pragma once
// The iteration loop of a run, one for both runners (Executor.cpp: every device in this
// process; DistributedRunner.cpp: one process per device). Every step: the stages forget the
// last step's reduce and optimizer marks, fresh workers run this process's programs, the first
// failure ends the run, and the step's time, loss and peaks go into the report and out as the
// live iteration event. What differs between the runners is a subclass's: where each step's
// transports come from, how workers get threads, and how other processes' numbers join.
// Torch-free header, like Executor.h.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"
#include "executor/Executor.h"

namespace mario {
class PipelineTopology;
}

namespace mario::exec {

class DeviceMemoryBook;
class DeviceWorker;
class GptModel;
class Transport;
struct Batch;
struct StageRuntime;

// One worker of a step: the plan's device whose program it runs, its data-parallel replica,
// the stages it holds and the transport it talks through (owned by the StepLoop subclass).
struct WorkerSeat {
    int device = 0;
    int replica = 0;
    std::map<int, StageRuntime*> stages;
    Transport* transport = nullptr;
    // Where devices share an allocator: the book and account its memory is charged to.
    std::shared_ptr<DeviceMemoryBook> book;
    int account = 0;
};

// What one worker measured in one step: the numbers every report is made of.
struct WorkerMeasure {
    int device = 0;
    double step_ms = 0;   // its process's step, from the first instruction to transfers finished
    double loss_sum = 0;  // DeviceWorker::lossSum
    double peak_activation_bytes = 0;
    double peak_allocated_bytes = 0;
};

// How allocator peaks enter RunReport::peak_allocated_bytes.
enum class AllocatorPeaks {
    PerDevice,  // one value per pipeline device (its GPU's, or its account's: DeviceMemoryBook.h)
    None,       // no reading (the CPU of a multi-process run)
};

// What the loop reports live and how.
struct StepReporting {
    // Live lines (already thread-safe): every worker's instructions and each step's iteration
    // event. Empty: no live events.
    std::function<void(const std::string&)> events;
    // Whether this process has the whole step's numbers to report (multi-process: rank 0).
    bool iterationEvents = true;
    AllocatorPeaks allocatorPeaks = AllocatorPeaks::None;
};

// What every step works on, built once per run by the runner (RunSetup.h).
struct StepInputs {
    const Plan& plan;
    const PipelineTopology& topology;
    const GptModel& model;
    const Batch& batch;
    std::vector<StageRuntime>& stages;  // every stage this process holds, all replicas
    int replicas = 1;                   // data-parallel degree of the whole run
};

class StepLoop {
public:
    StepLoop(StepInputs inputs, const ExecutorOptions& options, StepReporting reporting);
    virtual ~StepLoop();
    StepLoop(const StepLoop&) = delete;
    StepLoop& operator=(const StepLoop&) = delete;

    // Runs options.iterations steps, filling the report's step_ms, loss and peaks (of the last
    // step). Errors: the first failure of a step, or what gathering the numbers ran into.
    // Exceptions of the subclass's hooks pass through (the runners word them).
    Result<bool> run(RunReport& report);

protected:
    // This process's workers of `iteration` and their transports: made for this step or kept
    // across steps, alive until the next call.
    virtual std::vector<WorkerSeat> seat(int iteration) = 0;
    // Runs every worker's program to its end; threads and streams are the subclass's choice.
    virtual void runWorkers(const std::vector<std::unique_ptr<DeviceWorker>>& workers) = 0;
    // After runWorkers: waits for what is still in flight (transfers, the GPU), then returns the
    // step's first failure, if any.
    virtual std::optional<std::string> finishStep() = 0;
    // Every worker's measures of the run, in the order their losses are summed (a fixed order
    // keeps the loss bit-identical run to run), on the process that reports; the others get an
    // empty list. In one process: `mine`.
    virtual Result<std::vector<WorkerMeasure>> gather(std::vector<WorkerMeasure> mine) = 0;

    const StepInputs& inputs() const { return inputs_; }
    const ExecutorOptions& options() const { return options_; }

private:
    // One step's numbers into the report and, where whole, out as the iteration event.
    void report(int iteration, const std::vector<WorkerMeasure>& measures, RunReport& report) const;

    StepInputs inputs_;
    const ExecutorOptions& options_;
    StepReporting reporting_;
};

}  // namespace mario::exec
