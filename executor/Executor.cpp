#include "Executor.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include <torch/torch.h>

#include "DeviceWorker.h"
#include "Exchange.h"
#include "GptModel.h"
#include "schedule/PipelineTopology.h"

namespace mario::exec {
namespace {

// A plan's `layers` describe the model it was planned for (e.g. 40 blocks of a 13B model);
// they are used only when they describe this model, i.e. every stage has them and they end
// exactly at its block count. Otherwise the chain-position rule maps the plan onto this model,
// so that any valid plan runs on any model.
bool planLayersFit(const Plan& plan, int layers) {
    int maxEnd = 0;
    for (const auto& st : plan.stages) {
        if (!st.layers || st.layers->first < 0 || st.layers->first > st.layers->second) return false;
        maxEnd = std::max(maxEnd, st.layers->second);
    }
    return !plan.stages.empty() && maxEnd == layers;
}

// DESIGN.md §4: the stage's `layers` if given, else the j-th of L even slices of its chain;
// the chain's first stage also embeds, its last also holds norm + head + loss.
LayerSlice sliceOf(const Plan& plan, const PipelineTopology& topology, int stage, int layers, bool usePlanLayers) {
    const int chain = topology.chainOf(stage), length = topology.chainLength(chain);
    const int position = topology.positionOf(stage);
    LayerSlice slice;
    if (usePlanLayers) {
        slice.begin = plan.stages[stage].layers->first;
        slice.end = plan.stages[stage].layers->second;
    } else {
        slice.begin = position * layers / length;
        slice.end = (position + 1) * layers / length;
    }
    slice.embedding = position == 0;
    slice.head = position == length - 1;
    return slice;
}

// Sums the gradients of replicas that no REDUCE_GRAD summed (plans without REDUCE_GRAD), then
// steps the stages whose program has no OPT, so every iteration ends with one optimizer step.
void implicitReduceAndStep(std::vector<StageRuntime>& stages, double lr, bool adam) {
    std::map<std::string, std::vector<StageRuntime*>> bySlice;
    for (auto& st : stages)
        if (!st.stepped) bySlice[st.slice.key()].push_back(&st);
    torch::NoGradGuard noGrad;
    for (auto& [key, group] : bySlice) {
        if (group.size() > 1 && !group.front()->reduced) {
            for (auto& [name, p] : group.front()->params) {
                if (!p.grad().defined()) continue;
                torch::Tensor sum = p.grad().clone();
                for (std::size_t i = 1; i < group.size(); ++i) {
                    const auto& other = group[i]->params.at(name).grad();
                    if (other.defined()) sum += other;
                }
                for (auto* st : group) {
                    auto& q = st->params.at(name);
                    if (q.grad().defined()) q.mutable_grad().copy_(sum);
                    else q.mutable_grad() = sum.clone();
                }
            }
        }
        for (auto* st : group) DeviceWorker::optimizerStep(*st, lr, adam);
    }
}

}  // namespace

Result<RunReport> runPlan(const Plan& plan, const ExecutorOptions& options) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    const PipelineTopology& topology = *topologyResult;
    if (static_cast<int>(plan.devices.size()) != topology.deviceCount())
        return makeError("plan has " + std::to_string(plan.devices.size()) + " programs for " +
                         std::to_string(topology.deviceCount()) + " devices");
    at::set_num_threads(1);

    const GptModel model(options.model, options.seed);
    const int microbatches = plan.microbatchCount();
    const int mbs = std::max(1, plan.info.micro_batch_size);
    Batch batch;
    for (int m = 0; m < microbatches; ++m) {
        auto tokens = model.syntheticTokens(options.seed, m, mbs);
        batch.inputs.push_back(tokens.slice(1, 0, options.model.seq).contiguous());
        batch.targets.push_back(tokens.slice(1, 1, options.model.seq + 1).contiguous());
    }

    std::vector<StageRuntime> stages(plan.stages.size());
    std::map<std::string, int> replicaCount;
    const bool usePlanLayers = planLayersFit(plan, options.model.layers);
    for (int s = 0; s < topology.stageCount(); ++s) {
        stages[s].index = s;
        stages[s].slice = sliceOf(plan, topology, s, options.model.layers, usePlanLayers);
        stages[s].params = model.cloneSlice(stages[s].slice);
        ++replicaCount[stages[s].slice.key()];
    }
    for (auto& st : stages) st.replicas = replicaCount[st.slice.key()];

    // Serialise the live events of all device threads.
    std::mutex eventMutex;
    std::function<void(const std::string&)> sink;
    if (options.on_event)
        sink = [&](const std::string& line) {
            std::lock_guard lock(eventMutex);
            options.on_event(line);
        };
    const auto origin = std::chrono::steady_clock::now();

    RunReport report;
    report.plan_layers_used = usePlanLayers;
    report.instructions = plan.instructionCount();
    report.devices = topology.deviceCount();
    for (int iteration = 0; iteration < options.iterations; ++iteration) {
        for (auto& st : stages) st.reduced = st.stepped = false;
        Exchange exchange(options.recv_timeout_s);
        std::vector<std::unique_ptr<DeviceWorker>> workers;
        for (int d = 0; d < topology.deviceCount(); ++d) {
            std::map<int, StageRuntime*> mine;
            for (auto& st : stages)
                if (topology.deviceOf(st.index) == d) mine[st.index] = &st;
            workers.push_back(std::make_unique<DeviceWorker>(d, plan, topology, model, std::move(mine), batch,
                                                             exchange, options.lr, options.adam, iteration));
        }
        if (sink)
            for (auto& w : workers) w->setEventSink(sink, origin);
        const auto stepStart = std::chrono::steady_clock::now();
        std::vector<std::thread> threads;
        for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
        for (auto& t : threads) t.join();
        if (auto failure = exchange.failure()) return makeError(*failure);
        report.loss = 0;
        report.peak_activation_bytes.clear();
        for (auto& w : workers) {
            report.loss += w->lossSum();
            report.peak_activation_bytes.push_back(w->peakActivationBytes());
        }
        implicitReduceAndStep(stages, options.lr, options.adam);
        if (sink)
            sink(nlohmann::json{{"event", "iteration"},
                                {"iteration", iteration},
                                {"loss", report.loss},
                                {"step_ms", std::chrono::duration<double, std::milli>(
                                                std::chrono::steady_clock::now() - stepStart)
                                                .count()},
                                {"peak_activation_bytes", report.peak_activation_bytes}}
                     .dump());
    }
    if (!options.reference) return report;

    // The reference: the whole model on one device, all micro-batches in turn, same steps.
    LayerSlice whole{0, options.model.layers, true, true};
    StageRuntime reference;
    reference.slice = whole;
    reference.params = model.cloneSlice(whole);
    double referenceLoss = 0;
    for (int iteration = 0; iteration < options.iterations; ++iteration) {
        referenceLoss = 0;
        for (int m = 0; m < microbatches; ++m) {
            auto loss = model.forward(whole, reference.params, batch.inputs[m], batch.targets[m]) /
                        static_cast<double>(microbatches);
            loss.backward();
            referenceLoss += loss.item<double>();
        }
        DeviceWorker::optimizerStep(reference, options.lr, options.adam);
    }
    report.reference_loss = referenceLoss;

    // Replicas hold the summed gradient after the reduce, so the first holder of a name is
    // the pipeline's gradient for it.
    for (const auto& [name, gRef] : reference.gradSnapshot) {
        const torch::Tensor* g = nullptr;
        for (const auto& st : stages) {
            auto it = st.gradSnapshot.find(name);
            if (it != st.gradSnapshot.end()) {
                g = &it->second;
                const auto& w = st.params.at(name);
                report.max_weight_abs_diff = std::max(
                    report.max_weight_abs_diff, (w - reference.params.at(name)).abs().max().item<double>());
                break;
            }
        }
        ++report.compared_parameters;
        if (!g) {
            report.grads_match = false;
            report.mismatched.push_back(name + " (no pipeline gradient)");
            continue;
        }
        const double absDiff = (*g - gRef).abs().max().item<double>();
        const double rel = absDiff / (gRef.abs().max().item<double>() + 1e-12);
        report.max_grad_abs_diff = std::max(report.max_grad_abs_diff, absDiff);
        report.max_grad_rel_diff = std::max(report.max_grad_rel_diff, rel);
        if (!torch::allclose(*g, gRef, options.rtol, options.atol)) {
            report.grads_match = false;
            report.mismatched.push_back(name);
        }
    }
    return report;
}

}  // namespace mario::exec
