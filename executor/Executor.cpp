#include "Executor.h"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <c10/core/StreamGuard.h>
#include <nlohmann/json.hpp>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "DeviceWorker.h"
#include "Exchange.h"
#include "GptModel.h"
#include "InProcessTransport.h"
#include "BlasThreads.h"
#include "RunSetup.h"
#include "schedule/PipelineTopology.h"

namespace mario::exec {
namespace {

// One stream per pipeline device when all of them share a GPU, so their kernels overlap as on
// separate GPUs; nothing on CPU.
std::vector<std::optional<c10::Stream>> workerStreams(const torch::Device& device, int workers) {
    std::vector<std::optional<c10::Stream>> streams(workers);
    if (device.is_cpu()) return streams;
    auto* impl = c10::impl::getDeviceGuardImpl(device.type());
    for (auto& s : streams) s = impl->getStreamFromGlobalPool(device);
    return streams;
}

}  // namespace

Result<RunReport> runPlan(const Plan& plan, const ExecutorOptions& options) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    const PipelineTopology& topology = *topologyResult;
    if (static_cast<int>(plan.devices.size()) != topology.deviceCount())
        return makeError("plan has " + std::to_string(plan.devices.size()) + " programs for " +
                         std::to_string(topology.deviceCount()) + " devices");
    if (options.data_parallel < 1) return makeError("data-parallel degree must be at least 1");
    at::set_num_threads(1);
    useOneBlasThread();
    const int replicas = options.data_parallel;
    const int microbatches = plan.microbatchCount();

    try {
        const torch::Device device = torchDevice(options);
        const torch::ScalarType dtype = torchDtype(options);
        const GptModel model(options.model, options.seed);
        const Batch batch =
            buildBatch(model, options, microbatches, std::max(1, plan.info.micro_batch_size), replicas, device);
        RunReport report;
        // One copy of every stage per data-parallel replica; replica r's stages are r·S .. r·S+S-1.
        std::vector<StageRuntime> stages;
        for (int r = 0; r < replicas; ++r) {
            auto copy = buildStages(plan, topology, model, replicas, device, dtype, report.plan_layers_used);
            for (auto& st : copy) stages.push_back(std::move(st));
        }
        const int stageCount = topology.stageCount();

        // Serialise the live events of all device threads.
        std::mutex eventMutex;
        std::function<void(const std::string&)> sink;
        if (options.on_event)
            sink = [&](const std::string& line) {
                std::lock_guard lock(eventMutex);
                options.on_event(line);
            };
        const auto origin = std::chrono::steady_clock::now();
        const int workerCount = topology.deviceCount() * replicas;
        const auto streams = workerStreams(device, workerCount);

        report.instructions = plan.instructionCount();
        report.devices = topology.deviceCount();
        report.data_parallel = replicas;
        for (int iteration = 0; iteration < options.iterations; ++iteration) {
            for (auto& st : stages) st.reduced = st.stepped = false;
            Exchange exchange(options.recv_timeout_s);
            std::vector<std::unique_ptr<InProcessTransport>> transports;
            std::vector<std::unique_ptr<DeviceWorker>> workers;
            for (int r = 0; r < replicas; ++r) {
                transports.push_back(std::make_unique<InProcessTransport>(exchange, r));
                for (int d = 0; d < topology.deviceCount(); ++d) {
                    std::map<int, StageRuntime*> mine;
                    for (int s = 0; s < stageCount; ++s)
                        if (topology.deviceOf(s) == d) mine[s] = &stages[r * stageCount + s];
                    const WorkerPlace place{d, r, replicas, iteration, options.lr, options.adam};
                    workers.push_back(std::make_unique<DeviceWorker>(place, plan, topology, model, std::move(mine),
                                                                     batch, *transports.back()));
                }
            }
            if (sink)
                for (auto& w : workers) w->setEventSink(sink, origin);
            const auto stepStart = std::chrono::steady_clock::now();
            std::vector<std::thread> threads;
            for (std::size_t i = 0; i < workers.size(); ++i)
                threads.emplace_back([&, i] {
                    std::optional<c10::StreamGuard> onStream;
                    if (streams[i]) onStream.emplace(*streams[i]);
                    workers[i]->run();
                });
            for (auto& t : threads) t.join();
            if (auto failure = exchange.failure()) return makeError(*failure);
            if (device.is_cuda()) torch::cuda::synchronize(device.index());
            report.step_ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stepStart).count());
            report.loss = 0;
            report.peak_activation_bytes.assign(topology.deviceCount(), 0.0);
            double allocated = 0;
            for (std::size_t i = 0; i < workers.size(); ++i) {
                allocated = std::max(allocated, workers[i]->peakAllocatedBytes());
                report.loss += workers[i]->lossSum();
                auto& peak = report.peak_activation_bytes[i % topology.deviceCount()];
                peak = std::max(peak, workers[i]->peakActivationBytes());
            }
            report.peak_allocated_bytes.clear();
            if (allocated > 0) report.peak_allocated_bytes.push_back(allocated);
            if (sink)
                sink(nlohmann::json{{"event", "iteration"},
                                    {"iteration", iteration},
                                    {"loss", report.loss},
                                    {"step_ms", report.step_ms.back()},
                                    {"peak_activation_bytes", report.peak_activation_bytes}}
                         .dump());
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
