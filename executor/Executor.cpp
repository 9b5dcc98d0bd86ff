#include "executor/Executor.h"

#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <c10/core/StreamGuard.h>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "core/schedule/PipelineTopology.h"
#include "executor/AllocationTracker.h"
#include "executor/BlasThreads.h"
#include "executor/DeviceMemoryBook.h"
#include "executor/DeviceStreams.h"
#include "executor/DeviceWorker.h"
#include "executor/Exchange.h"
#include "executor/GptModel.h"
#include "executor/GreenContexts.h"
#include "executor/InProcessTransport.h"
#include "executor/RunSetup.h"
#include "executor/StepDump.h"
#include "executor/StepLoop.h"
#include "executor/ThreadBudget.h"

namespace mario::exec {
namespace {

// The stream of every worker when all of them share a GPU: its own SM partition's, or one of
// PyTorch's pool streams (docs/gpu.md); none on the CPU. `partitions` keeps the green contexts
// alive for as long as their streams are used.
Result<std::vector<c10::Stream>> workerStreams(const torch::Device& device, int workers, const ExecutorOptions& options,
                                               std::unique_ptr<GreenContexts>& partitions) {
    if (!options.partition_sms || device.is_cpu()) {
        if (options.partition_sms) return makeError("--partition-sms needs --backend cuda (the CPU has no SMs)");
        return poolStreams(device, workers);
    }
    std::string failure;
    if (auto made = GreenContexts::create(device.index(), workers); !made) {
        failure = made.error().message;
    } else if (auto streams = partitionStreams(**made, device); !streams) {
        failure = streams.error().message;
    } else {
        partitions = std::move(*made);
        return streams;
    }
    const std::string why =
        "cannot give each of the " + std::to_string(workers) + " pipeline devices its own SM partition: " + failure;
    if (!options.shared_streams_fallback) return makeError(why + " (--shared-streams runs them on shared SMs instead)");
    if (options.on_notice) options.on_notice(why + "; running on shared streams (--shared-streams)");
    return poolStreams(device, workers);
}

// Every (device, replica) of the run as a thread of this process, talking through one Exchange
// per step (a fresh one, so a step never sees the last one's messages).
class InProcessSteps final : public StepLoop {
public:
    InProcessSteps(StepInputs inputs, const ExecutorOptions& options, StepReporting reporting,
                   const torch::Device& device, std::vector<c10::Stream> streams,
                   std::shared_ptr<DeviceMemoryBook> book)
        : StepLoop(inputs, options, std::move(reporting)), device_(device), streams_(std::move(streams)),
          book_(std::move(book)) {}

protected:
    std::vector<WorkerSeat> seat(int) override {
        transports_.clear();  // before the exchange they talk through
        exchange_ = std::make_unique<Exchange>(options().recv_timeout_s);
        const PipelineTopology& topology = inputs().topology;
        const int stageCount = topology.stageCount();
        std::vector<WorkerSeat> seats;
        // Replica r's stages are r·S .. r·S+S-1; workers replica-major, as the loss is summed.
        for (int r = 0; r < inputs().replicas; ++r) {
            transports_.push_back(std::make_unique<InProcessTransport>(*exchange_, r));
            for (int d = 0; d < topology.deviceCount(); ++d) {
                // Accounts are numbered as the workers: replica-major.
                WorkerSeat seat{d, r, {}, transports_.back().get(), book_, r * topology.deviceCount() + d};
                for (int s = 0; s < stageCount; ++s)
                    if (topology.deviceOf(s) == d) seat.stages[s] = &inputs().stages[r * stageCount + s];
                seats.push_back(std::move(seat));
            }
        }
        book_->resetPeaks();  // each iteration reports its own peaks
        return seats;
    }

    void runWorkers(const std::vector<std::unique_ptr<DeviceWorker>>& workers) override {
        // The weights and the batch were copied on this thread's stream; the workers' streams do
        // not wait for it by themselves.
        if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
        std::vector<std::thread> threads;
        threads.reserve(workers.size());
        try {
            for (std::size_t i = 0; i < workers.size(); ++i)
                threads.emplace_back([&, i] {
                    std::optional<c10::StreamGuard> onStream;
                    if (i < streams_.size()) onStream.emplace(streams_[i]);
                    workers[i]->run();
                });
        } catch (const std::system_error& e) {
            // The machine ran out of threads below the budget (ThreadBudget.h: other processes
            // took them meanwhile). The workers already started wait for ones that never will:
            // the failure wakes them, and they are joined before the vector goes (a joinable
            // std::thread destroyed is std::terminate, the abort this replaces).
            transports_.front()->fail("cannot start the thread of worker " + std::to_string(threads.size() + 1) +
                                      " of " + std::to_string(workers.size()) + ": " + e.what() +
                                      " (lower --dp, or run one process per device under torchrun)");
        }
        for (auto& t : threads) t.join();
    }

    std::optional<std::string> finishStep() override {
        // Every transport of the step shares the exchange, and with it the first failure.
        if (auto failure = transports_.front()->failure()) return failure;
        if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
        return std::nullopt;
    }

    Result<std::vector<WorkerMeasure>> gather(std::vector<WorkerMeasure> mine) override { return mine; }

private:
    torch::Device device_;
    std::vector<c10::Stream> streams_;
    std::shared_ptr<DeviceMemoryBook> book_;
    std::unique_ptr<Exchange> exchange_;
    std::vector<std::unique_ptr<InProcessTransport>> transports_;
};

}  // namespace

Result<RunReport> runPlan(const Plan& plan, const ExecutorOptions& options) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    const PipelineTopology& topology = *topologyResult;
    if (static_cast<int>(plan.devices.size()) != topology.deviceCount())
        return makeError("plan has " + std::to_string(plan.devices.size()) + " programs for " +
                         std::to_string(topology.deviceCount()) + " devices");
    if (options.data_parallel < 1) return makeError("data-parallel degree must be at least 1");
    // Before any weight: the CLI refuses the same run with exit 2 before it calls this.
    if (auto refused = threadRefusal(topology.deviceCount(), options.data_parallel, threadLimit(readMachineThreads())))
        return makeError(*refused);
    at::set_num_threads(1);
    useOneBlasThread();
    const int replicas = options.data_parallel;
    const int microbatches = plan.microbatchCount();

    try {
        const torch::Device device = torchDevice(options);
        const torch::ScalarType dtype = torchDtype(options);
        // Before the weights: the green contexts must outlive every tensor their streams touched.
        std::unique_ptr<GreenContexts> partitions;
        auto streams = workerStreams(device, topology.deviceCount() * replicas, options, partitions);
        if (!streams) return streams.error();
        const GptModel model(options.model, options.seed, device);
        const Batch batch =
            buildBatch(model, options, microbatches, std::max(1, plan.info.micro_batch_size), replicas, device);
        RunReport report;
        // One copy of every stage per data-parallel replica; replica r's stages are r·S .. r·S+S-1.
        std::vector<StageRuntime> stages;
        for (int r = 0; r < replicas; ++r) {
            auto copy = buildStages(plan, topology, model, replicas, device, dtype, report.plan_layers_used);
            for (auto& st : copy) stages.push_back(std::move(st));
        }
        report.instructions = plan.instructionCount();
        report.devices = topology.deviceCount();
        report.data_parallel = replicas;

        // Every device's memory in its own account, its weights from the start (DeviceMemoryBook.h).
        const int workers = topology.deviceCount() * replicas;
        auto book = std::make_shared<DeviceMemoryBook>(workers);
        for (std::size_t i = 0; i < stages.size(); ++i) {
            const StageRuntime& st = stages[i];
            const int replica = static_cast<int>(i) / topology.stageCount();
            const int account = replica * topology.deviceCount() + topology.deviceOf(st.index);
            for (const auto& [name, p] : st.params)
                book->allocated(p.data_ptr(), static_cast<std::int64_t>(p.storage().nbytes()), account);
        }

        // Serialise the live events of all device threads.
        std::mutex eventMutex;
        StepReporting reporting;
        reporting.allocatorPeaks = AllocatorPeaks::PerDevice;
        if (options.on_event)
            reporting.events = [&](const std::string& line) {
                std::lock_guard lock(eventMutex);
                options.on_event(line);
            };
        InProcessSteps steps({plan, topology, model, batch, stages, replicas}, options, std::move(reporting), device,
                             std::move(*streams), book);
        {
            // Frees on this thread (the workers' leftovers, destroyed here) end their charges too.
            TrackAllocations tracking(chargeTo(book, -1, device.type()));
            if (auto ran = steps.run(report); !ran) return ran.error();
        }
        if (!options.dump_step_dir.empty()) try {
                writeStepDump(options.dump_step_dir, {model, options, topology, batch, stages, microbatches,
                                                      std::max(1, plan.info.micro_batch_size), report});
            } catch (const std::runtime_error& e) {
                report.output_error = e.what();
                return report;
            }
        if (!options.reference) return report;
        std::vector<StageOutcome> outcomes;
        for (const auto& st : stages) outcomes.push_back({st.gradSnapshot, st.params});
        checkAgainstReference(model, batch, options, outcomes, report);
        return report;
    } catch (const std::exception& e) {
        // Setup errors (unknown device, unreadable token file, no CUDA in this LibTorch).
        return makeError(e.what());
    }
}

}  // namespace mario::exec
