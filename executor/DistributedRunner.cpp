#include "executor/DistributedRunner.h"

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "core/io/PlanJson.h"
#include "core/model/RankLayout.h"
#include "core/schedule/PipelineTopology.h"
#include "executor/BlasThreads.h"
#include "executor/CommGroups.h"
#include "executor/DeviceWorker.h"
#include "executor/GptModel.h"
#include "executor/LinkOrder.h"
#include "executor/ModelSpec.h"
#include "executor/GpuSharing.h"
#include "executor/ProcessGroupTransport.h"
#include "executor/RankStore.h"
#include "executor/RunRefusals.h"
#include "executor/RunSetup.h"
#include "executor/StepLoop.h"
#include "executor/TensorWire.h"

namespace mario::exec {
namespace {

// Per REDUCE_GRAD group (slice key), the ranks holding the slice in ascending order.
Result<std::map<std::string, std::vector<int>>> reduceGroupRanks(const std::vector<StageRuntime>& stages,
                                                                 const PipelineTopology& topology, int replicas) {
    std::map<std::string, std::vector<int>> groups;
    for (int r = 0; r < replicas; ++r) {
        for (const auto& st : stages) {
            const int rank = rankOf({topology.deviceOf(st.index), r, 0}, 1, replicas);
            auto& ranks = groups[st.slice.key()];
            if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end())
                return makeError("device " + std::to_string(topology.deviceOf(st.index)) +
                                 " holds two stages with layers " + st.slice.key() +
                                 "; a multi-process run needs them on different devices");
            ranks.push_back(rank);
        }
    }
    for (auto& [key, ranks] : groups) std::sort(ranks.begin(), ranks.end());
    return groups;
}

using Bytes = std::vector<std::uint8_t>;

// What every rank must run alike: the plan and the options that shape the numbers. Ranks that
// were started with different files or flags would otherwise wait on messages that never come.
std::string runFingerprint(const Plan& plan, const ExecutorOptions& o) {
    const std::string text = writePlan(plan).dump() + "|" + describe(o.model) + "|" + o.dtype + "|" +
                             std::to_string(o.iterations) + "|" + std::to_string(o.seed) + "|" +
                             std::to_string(o.adam) + "|" + std::to_string(o.lr) + "|" + o.tokens_file;
    return std::to_string(std::hash<std::string_view>{}(text));
}

// Two ranks that disagree are named, identically on every rank (each judges the same list).
void checkSameRun(RankStore& store, const std::string& fingerprint) {
    const auto all = store.allGather("plan", fingerprint);
    for (int r = 1; r < static_cast<int>(all.size()); ++r)
        if (all[r] != all[0])
            throw std::runtime_error("ranks 0 and " + std::to_string(r) +
                                     " were started with different plans or run options; every rank must run the "
                                     "same plan file with the same flags");
}

Bytes bytesOf(const std::vector<std::byte>& bytes) {
    Bytes out(bytes.size());
    if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}
std::span<const std::byte> viewOf(const Bytes& bytes) {
    return {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()};
}

// This rank's one worker per step, on this thread (a GPU's CUDA context is this thread's), with
// the one transport of the run.
class ProcessSteps final : public StepLoop {
public:
    ProcessSteps(StepInputs inputs, const ExecutorOptions& options, StepReporting reporting, RankPlace place,
                 std::map<int, StageRuntime*> mine, ProcessGroupTransport& transport, RankStore& store)
        : StepLoop(inputs, options, std::move(reporting)), place_(place), mine_(std::move(mine)),
          transport_(transport), store_(store) {}

protected:
    std::vector<WorkerSeat> seat(int) override {
        // No memory book: the GPU (or CPU process) is this rank's alone.
        return {WorkerSeat{place_.device, place_.replica, mine_, &transport_, nullptr, 0}};
    }

    void runWorkers(const std::vector<std::unique_ptr<DeviceWorker>>& workers) override {
        for (const auto& worker : workers) worker->run();
    }

    std::optional<std::string> finishStep() override {
        try {
            transport_.finishIteration();
        } catch (const RunAborted&) {
        } catch (const std::exception& e) {
            transport_.fail(std::string("end of step: ") + e.what());
        }
        return transport_.failure();
    }

    // Every rank's step time, loss share, activation peak and allocator peak, to rank 0.
    Result<std::vector<WorkerMeasure>> gather(std::vector<WorkerMeasure> mine) override {
        const WorkerMeasure& m = mine.front();
        const double numbers[] = {m.step_ms, m.loss_sum, m.peak_activation_bytes, m.peak_allocated_bytes};
        Bytes bytes(sizeof numbers);
        std::memcpy(bytes.data(), numbers, sizeof numbers);
        const auto all = store_.gather("step/" + std::to_string(step_++), std::move(bytes));
        std::vector<WorkerMeasure> measures;
        for (int r = 0; r < static_cast<int>(all.size()); ++r) {
            if (all[r].size() != sizeof numbers) return makeError("rank " + std::to_string(r) + " sent a malformed summary");
            double n[4];
            std::memcpy(n, all[r].data(), sizeof n);
            measures.push_back({placeOf(r, 1, inputs().replicas).device, n[0], n[1], n[2], n[3]});
        }
        return measures;
    }

private:
    RankPlace place_;
    std::map<int, StageRuntime*> mine_;
    ProcessGroupTransport& transport_;
    RankStore& store_;
    int step_ = 0;
};

// The ranks this rank exchanges tensors with: the ends of its device's pipeline links in its
// replica, and the other holders of its REDUCE_GRAD slices.
std::vector<int> peersOf(int rank, int device, const LinkOrder& links, const std::function<int(int)>& rankOfDevice,
                         const std::map<std::string, std::vector<int>>& ranksOfGroup) {
    std::set<int> peers;
    for (const auto& [from, to] : links.links()) {
        if (from == device) peers.insert(rankOfDevice(to));
        if (to == device) peers.insert(rankOfDevice(from));
    }
    for (const auto& [key, ranks] : ranksOfGroup)
        if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) peers.insert(ranks.begin(), ranks.end());
    peers.erase(rank);
    return {peers.begin(), peers.end()};
}

// This rank's groups: the world for SEND/RECV, and one per REDUCE_GRAD slice it shares with other
// ranks. Every rank walks the groups in the same (sorted) order, so their collective set-ups
// never wait on each other crosswise.
struct Groups {
    CommGroupPtr world;
    std::map<std::string, CommGroupPtr> reduce;
};

Groups makeGroups(RankStore& store, const std::map<std::string, std::vector<int>>& ranksOfGroup, Backend backend,
                  double timeout_s) {
    auto make = [&](const StorePtr& keys, int rank, int size) {
        return backend == Backend::Cuda ? makeNcclGroup(keys, rank, size, timeout_s)
                                        : makeGlooGroup(keys, rank, size, timeout_s);
    };
    Groups groups;
    groups.world = make(store.scoped("world"), store.rank(), store.worldSize());
    int index = 0;
    for (const auto& [key, ranks] : ranksOfGroup) {
        const auto me = std::find(ranks.begin(), ranks.end(), store.rank());
        const std::string prefix = "reduce/" + std::to_string(index++);
        if (ranks.size() < 2 || me == ranks.end()) continue;
        groups.reduce[key] = make(store.scoped(prefix), static_cast<int>(me - ranks.begin()), static_cast<int>(ranks.size()));
    }
    return groups;
}

}  // namespace

Result<RunReport> runDistributed(const Plan& plan, const ExecutorOptions& options, const LaunchEnv& env,
                                 Backend backend) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    const PipelineTopology& topology = *topologyResult;
    const int devices = topology.deviceCount();
    // The CLI refuses these before the run (exit 2); the runner's other callers get the same line.
    if (auto refused = launchRefusal(plan, options, env)) return makeError(*refused);
    const int replicas = env.world_size / devices;
    const RankPlace place = placeOf(env.rank, 1, replicas);
    at::set_num_threads(1);
    useOneBlasThread();

    std::unique_ptr<RankStore> store;
    try {
        store = RankStore::open(env, std::max(60.0, options.recv_timeout_s));
    } catch (const std::exception& e) {
        return makeError(e.what());
    }
    auto outcome = [&]() -> Result<RunReport> {
        try {
            checkSameRun(*store, runFingerprint(plan, options));
            ExecutorOptions local = options;
            local.device = backend == Backend::Cuda ? "cuda:" + std::to_string(env.local_rank) : "cpu";
            // Two ranks on one GPU: NCCL refuses them with only "invalid usage", so they are named first.
            if (backend == Backend::Cuda)
                if (auto why = sharedGpuProblem(store->allGather("gpu", gpuIdentity(env.local_rank))))
                    throw std::runtime_error(*why);
            const torch::Device device = torchDevice(local);
            const torch::ScalarType dtype = torchDtype(local);
            const GptModel model(options.model, options.seed, device);
            const int microbatches = plan.microbatchCount();
            const int mbs = std::max(1, plan.info.micro_batch_size);
            const Batch batch = buildBatch(model, local, microbatches, mbs, replicas, device);
            RunReport report;
            report.rank = env.rank;
            report.world = env.world_size;
            report.devices = devices;
            report.data_parallel = replicas;
            report.instructions = plan.instructionCount();
            std::vector<StageRuntime> stages =
                buildStages(plan, topology, model, replicas, device, dtype, report.plan_layers_used);
            auto ranksOfGroup = reduceGroupRanks(stages, topology, replicas);
            if (!ranksOfGroup) return ranksOfGroup.error();
            std::map<int, StageRuntime*> mine;
            for (auto& st : stages)
                if (topology.deviceOf(st.index) == place.device) mine[st.index] = &st;
            const LinkOrder links = LinkOrder::build(plan, topology);

            const double timeout = options.recv_timeout_s;
            Groups groups = makeGroups(*store, *ranksOfGroup, backend, std::max(60.0, timeout));
            GroupTransportSetup setup;
            setup.rank = env.rank;
            setup.device = place.device;
            setup.rankOfDevice = [replicas, replica = place.replica](int d) { return rankOf({d, replica, 0}, 1, replicas); };
            setup.topology = &topology;
            setup.links = &links;
            setup.world = groups.world;
            setup.reduceGroups = groups.reduce;
            setup.messageShape = {mbs, options.model.seq, options.model.hidden};
            setup.messageOptions = torch::TensorOptions().device(device).dtype(dtype);
            setup.timeout_s = timeout;
            setup.blockingWaits = backend != Backend::Cuda;
            setup.postReceivesEarly = backend != Backend::Cuda;
            if (backend == Backend::Cuda) {
                setup.finishDevice = [gpu = env.local_rank] { synchronizeGpu(gpu); };
                setup.abortGroups = [groups] {
                    abortNcclGroup(groups.world);
                    for (const auto& [key, group] : groups.reduce) abortNcclGroup(group);
                };
            }
            setup.peers = peersOf(env.rank, place.device, links, setup.rankOfDevice, *ranksOfGroup);
            // Long enough for a loaded host, short against the receive timeout.
            setup.heartbeat_timeout_s = std::clamp(timeout, 2.0, 5.0);
            ProcessGroupTransport transport(std::move(setup), *store, store->connectAgain());

            StepReporting reporting;
            reporting.events = options.on_event;
            reporting.iterationEvents = env.rank == 0;
            reporting.allocatorPeaks = backend == Backend::Cuda ? AllocatorPeaks::PerDevice : AllocatorPeaks::None;
            ProcessSteps steps({plan, topology, model, batch, stages, replicas}, options, std::move(reporting), place,
                               mine, transport, *store);
            if (auto ran = steps.run(report); !ran) {
                return ran.error();
            }
            if (options.reference) {
                // Every rank's stages (grads, then weights) to rank 0, which runs the reference.
                ParamMap grads, weights;
                for (auto& [index, st] : mine) {
                    grads.insert(st->gradSnapshot.begin(), st->gradSnapshot.end());
                    weights.insert(st->params.begin(), st->params.end());
                }
                std::vector<std::byte> bytes;
                appendParams(bytes, grads);
                appendParams(bytes, weights);
                const auto outcomes = store->gather("reference", bytesOf(bytes));
                if (env.rank == 0) {
                    std::vector<StageOutcome> gathered;
                    for (const auto& rankBytes : outcomes) {
                        std::size_t at = 0;
                        StageOutcome outcome;
                        outcome.grads = readParams(viewOf(rankBytes), at);
                        outcome.weights = readParams(viewOf(rankBytes), at);
                        gathered.push_back(std::move(outcome));
                    }
                    checkAgainstReference(model, batch, local, gathered, report);
                }
            }
            // Nobody tears its groups down while a peer may still be reading from them.
            store->barrier("end");
            return report;
        } catch (const std::exception& e) {
            return makeError("rank " + std::to_string(env.rank) + ": " + errorLine(e));
        }
    }();
    // Every way this rank gives up goes through the store, and the first line posted is the one
    // every rank reports.
    if (!outcome) {
        const std::string standing = store->postFailure(outcome.error().message);
        // Long enough for the other live ranks to read the failure; a dead one never leaves.
        store->leave(2.0);
        return makeError(standing);
    }
    store->leave(std::max(60.0, options.recv_timeout_s));
    return outcome;
}

}  // namespace mario::exec
