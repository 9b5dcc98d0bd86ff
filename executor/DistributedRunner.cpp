#include "DistributedRunner.h"

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "DeviceWorker.h"
#include "GptModel.h"
#include "LinkOrder.h"
#include "RankLayout.h"
#include "BlasThreads.h"
#include "RunSetup.h"
#include "TcpMesh.h"
#include "TcpTransport.h"
#include "TensorWire.h"
#include "schedule/PipelineTopology.h"
#ifdef MARIO_HAVE_NCCL
#include "NcclTransport.h"
#endif

namespace mario::exec {
namespace {

std::vector<std::byte> doubleBytes(double value) {
    std::vector<std::byte> out(sizeof value);
    std::memcpy(out.data(), &value, sizeof value);
    return out;
}

double bytesDouble(const std::vector<std::byte>& bytes) {
    double value = 0;
    if (bytes.size() == sizeof value) std::memcpy(&value, bytes.data(), sizeof value);
    return value;
}

// Per REDUCE_GRAD group (slice key), the ranks holding the slice in ascending order.
Result<std::map<std::string, std::vector<int>>> reduceGroups(const std::vector<StageRuntime>& stages,
                                                             const PipelineTopology& topology, int replicas) {
    std::map<std::string, std::vector<int>> groups;
    for (int r = 0; r < replicas; ++r) {
        for (const auto& st : stages) {
            const int rank = dist::rankOf({topology.deviceOf(st.index), r, 0}, 1, replicas);
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

}  // namespace

Result<RunReport> runDistributed(const Plan& plan, const ExecutorOptions& options, const dist::LaunchEnv& env,
                                 const std::string& backend) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    const PipelineTopology& topology = *topologyResult;
    const int devices = topology.deviceCount();
    if (env.world_size % devices != 0)
        return makeError("WORLD_SIZE=" + std::to_string(env.world_size) + " is not a multiple of the plan's " +
                         std::to_string(devices) + " pipeline devices (the executor has no tensor parallelism)");
    const int replicas = env.world_size / devices;
    if (options.data_parallel != 1 && options.data_parallel != replicas)
        return makeError("--dp " + std::to_string(options.data_parallel) + " disagrees with WORLD_SIZE=" +
                         std::to_string(env.world_size) + " over " + std::to_string(devices) + " devices");
    const dist::RankPlace place = dist::placeOf(env.rank, 1, replicas);
    auto rankOfDevice = [replicas, replica = place.replica](int device) {
        return dist::rankOf({device, replica, 0}, 1, replicas);
    };
    at::set_num_threads(1);
    useOneBlasThread();

    auto meshResult = dist::TcpMesh::connect(env, std::max(60.0, options.recv_timeout_s));
    if (!meshResult) return meshResult.error();
    dist::TcpMesh& mesh = **meshResult;
    try {
        ExecutorOptions local = options;
        local.device = backend == "cuda" ? "cuda:" + std::to_string(env.local_rank) : "cpu";
        const torch::Device device = torchDevice(local);
        const torch::ScalarType dtype = torchDtype(local);
        const GptModel model(options.model, options.seed);
        const int microbatches = plan.microbatchCount();
        const int mbs = std::max(1, plan.info.micro_batch_size);
        const Batch batch = buildBatch(model, local, microbatches, mbs, replicas, device);
        RunReport report;
        report.rank = env.rank;
        report.world = env.world_size;
        report.devices = devices;
        report.data_parallel = replicas;
        report.instructions = plan.instructionCount();
        std::vector<StageRuntime> stages = buildStages(plan, topology, model, replicas, device, dtype,
                                                       report.plan_layers_used);
        auto groups = reduceGroups(stages, topology, replicas);
        if (!groups) return groups.error();
        std::map<int, StageRuntime*> mine;
        for (auto& st : stages)
            if (topology.deviceOf(st.index) == place.device) mine[st.index] = &st;

        const LinkOrder links = LinkOrder::build(plan, topology);
        std::unique_ptr<Transport> nccl;
#ifdef MARIO_HAVE_NCCL
        if (backend == "cuda") {
            NcclSetup setup;
            setup.rank = env.rank;
            setup.device = place.device;
            setup.rankOfDevice = rankOfDevice;
            setup.topology = &topology;
            setup.links = &links;
            for (const auto& [key, ranks] : *groups) setup.reduceGroups.push_back({key, ranks});
            for (int r = 0; r < replicas; ++r)
                for (auto [from, to] : links.links())
                    setup.linkRanks.push_back({dist::rankOf({from, r, 0}, 1, replicas), dist::rankOf({to, r, 0}, 1, replicas)});
            setup.messageShape = {mbs, options.model.seq, options.model.hidden};
            setup.cudaDevice = env.local_rank;
            setup.dtype = static_cast<int>(dtype);
            setup.timeout_s = options.recv_timeout_s;
            setup.broadcast = [&mesh, &options](std::vector<std::byte> bytes) {
                auto got = mesh.broadcast(std::move(bytes), std::max(60.0, options.recv_timeout_s));
                if (!got) throw std::runtime_error(got.error().message);
                return *got;
            };
            nccl = NcclTransport::create(setup);
        }
#else
        if (backend == "cuda")
            return makeError("the CUDA backend is not built: nvcc and NCCL were not found when mario-executor was built");
#endif

        const auto origin = std::chrono::steady_clock::now();
        for (int iteration = 0; iteration < options.iterations; ++iteration) {
            for (auto& st : stages) st.reduced = st.stepped = false;
#ifdef MARIO_HAVE_NCCL
            if (nccl) static_cast<NcclTransport&>(*nccl).beginIteration();
#endif
            TcpTransport tcp(mesh, topology, rankOfDevice, *groups, iteration, options.recv_timeout_s);
            Transport& transport = nccl ? *nccl : static_cast<Transport&>(tcp);
            const WorkerPlace workerPlace{place.device, place.replica, replicas, iteration, options.lr, options.adam};
            DeviceWorker worker(workerPlace, plan, topology, model, mine, batch, transport);
            if (options.on_event) worker.setEventSink(options.on_event, origin);
            const auto stepStart = std::chrono::steady_clock::now();
            worker.run();
#ifdef MARIO_HAVE_NCCL
            if (nccl) static_cast<NcclTransport&>(*nccl).drain();
#endif
            if (auto failure = tcp.failure()) return makeError(*failure);
            // A plan without REDUCE_GRAD/OPT (hand-written, or dp = 1 when planned) still ends the
            // step with summed gradients and one optimizer step; every rank runs the same plan, so
            // all members of a group take this path together, in stage order.
            for (auto& [index, st] : mine)
                if (st->reduce.participants > 1 && !st->reduced && !st->stepped) transport.contribute(st->reduce, st->params);
            for (auto& [index, st] : mine) {
                if (st->reduce.participants > 1 && !st->reduced && !st->stepped) {
                    transport.collect(st->reduce, st->params);
                    st->reduced = true;
                }
                if (!st->stepped) DeviceWorker::optimizerStep(*st, options.lr, options.adam);
            }
#ifdef MARIO_HAVE_NCCL
            if (nccl) static_cast<NcclTransport&>(*nccl).drain();
#endif
            const double myStepMs =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stepStart).count();
            auto steps = mesh.gather(doubleBytes(myStepMs), 0, options.recv_timeout_s);
            if (!steps) return steps.error();
            double stepMs = 0;
            for (const auto& bytes : *steps) stepMs = std::max(stepMs, bytesDouble(bytes));
            report.step_ms.push_back(stepMs);
            auto losses = mesh.gather(doubleBytes(worker.lossSum()), 0, options.recv_timeout_s);
            if (!losses) return losses.error();
            auto peaks = mesh.gather(doubleBytes(worker.peakActivationBytes()), 0, options.recv_timeout_s);
            if (!peaks) return peaks.error();
            auto allocated = mesh.gather(doubleBytes(worker.peakAllocatedBytes()), 0, options.recv_timeout_s);
            if (!allocated) return allocated.error();
            report.loss = 0;
            report.peak_activation_bytes.assign(devices, 0.0);
            report.peak_allocated_bytes.assign(devices, 0.0);
            for (int r = 0; r < static_cast<int>(losses->size()); ++r) {
                report.loss += bytesDouble((*losses)[r]);
                const int device = dist::placeOf(r, 1, replicas).device;
                report.peak_activation_bytes[device] = std::max(report.peak_activation_bytes[device], bytesDouble((*peaks)[r]));
                report.peak_allocated_bytes[device] = std::max(report.peak_allocated_bytes[device], bytesDouble((*allocated)[r]));
            }
            if (backend != "cuda") report.peak_allocated_bytes.clear();
            if (options.on_event && env.rank == 0)
                options.on_event(nlohmann::json{{"event", "iteration"},
                                                {"iteration", iteration},
                                                {"loss", report.loss},
                                                {"step_ms", stepMs},
                                                {"peak_activation_bytes", report.peak_activation_bytes}}
                                     .dump());
        }
        if (options.reference) {
            // Every rank's stages (grads and weights) to rank 0, which runs the reference.
            std::vector<std::byte> mineBytes;
            {
                std::vector<std::byte> grads, weights;
                ParamMap allGrads, allWeights;
                for (auto& [index, st] : mine) {
                    for (auto& [name, g] : st->gradSnapshot) allGrads[name] = g;
                    for (auto& [name, w] : st->params) allWeights[name] = w;
                }
                grads = paramBytes(allGrads);
                weights = paramBytes(allWeights);
                mineBytes = grads;
                mineBytes.insert(mineBytes.end(), weights.begin(), weights.end());
                std::vector<std::byte> header = doubleBytes(static_cast<double>(grads.size()));
                mineBytes.insert(mineBytes.begin(), header.begin(), header.end());
            }
            auto outcomes = mesh.gather(std::move(mineBytes), 0, options.recv_timeout_s);
            if (!outcomes) return outcomes.error();
            if (env.rank == 0) {
                std::vector<StageOutcome> gathered;
                for (const auto& bytes : *outcomes) {
                    const auto split = static_cast<std::size_t>(
                        bytesDouble(std::vector<std::byte>(bytes.begin(), bytes.begin() + sizeof(double))));
                    const std::span<const std::byte> all(bytes);
                    gathered.push_back({paramsFromBytes(all.subspan(sizeof(double), split)),
                                        paramsFromBytes(all.subspan(sizeof(double) + split))});
                }
                checkAgainstReference(model, batch, local, gathered, report);
            }
        }
        // Nobody tears down while a peer may still be reading from it.
        auto done = mesh.barrier(options.recv_timeout_s);
        if (!done) return done.error();
        return report;
    } catch (const std::exception& e) {
        mesh.abort(e.what());
        return makeError("rank " + std::to_string(env.rank) + ": " + e.what());
    }
}

}  // namespace mario::exec
