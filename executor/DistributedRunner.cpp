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

// Rank 0 gets every rank's numbers, in rank order (the others get an empty list).
Result<std::vector<std::vector<double>>> gatherNumbers(dist::TcpMesh& mesh, const std::vector<double>& mine,
                                                       double timeout_s) {
    std::vector<std::byte> bytes(mine.size() * sizeof(double));
    std::memcpy(bytes.data(), mine.data(), bytes.size());
    auto all = mesh.gather(std::move(bytes), 0, timeout_s);
    if (!all) return all.error();
    std::vector<std::vector<double>> numbers;
    for (const auto& b : *all) {
        if (b.size() != mine.size() * sizeof(double)) return makeError("a rank sent a malformed summary");
        numbers.emplace_back(mine.size());
        std::memcpy(numbers.back().data(), b.data(), b.size());
    }
    return numbers;
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
    // Every way this rank can give up goes through one exit, which tells the other ranks why:
    // they then name the rank that failed first, not the neighbour that went quiet after it.
    auto outcome = [&]() -> Result<RunReport> {
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
                TcpTransport tcp(mesh, topology, rankOfDevice, *groups, iteration, options.recv_timeout_s);
                Transport& transport = nccl ? *nccl : static_cast<Transport&>(tcp);
                const WorkerPlace workerPlace{place.device, place.replica, replicas, iteration, options.lr, options.adam};
                DeviceWorker worker(workerPlace, plan, topology, model, mine, batch, transport);
                if (options.on_event) worker.setEventSink(options.on_event, origin);
                const auto stepStart = std::chrono::steady_clock::now();
                worker.run();
                transport.finishIteration();
                if (auto failure = tcp.failure()) return makeError(*failure);
                const double myStepMs =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stepStart).count();
                // One message per rank: step time, loss share, activation peak, allocator peak.
                auto numbers = gatherNumbers(
                    mesh, {myStepMs, worker.lossSum(), worker.peakActivationBytes(), worker.peakAllocatedBytes()},
                    options.recv_timeout_s);
                if (!numbers) return numbers.error();
                double stepMs = 0;
                report.loss = 0;
                report.peak_activation_bytes.assign(devices, 0.0);
                report.peak_allocated_bytes.assign(devices, 0.0);
                for (int r = 0; r < static_cast<int>(numbers->size()); ++r) {
                    const auto& n = (*numbers)[r];
                    const int device = dist::placeOf(r, 1, replicas).device;
                    stepMs = std::max(stepMs, n[0]);
                    report.loss += n[1];
                    report.peak_activation_bytes[device] = std::max(report.peak_activation_bytes[device], n[2]);
                    report.peak_allocated_bytes[device] = std::max(report.peak_allocated_bytes[device], n[3]);
                }
                report.step_ms.push_back(stepMs);
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
                // Every rank's stages (grads, then weights) to rank 0, which runs the reference.
                ParamMap grads, weights;
                for (auto& [index, st] : mine) {
                    grads.insert(st->gradSnapshot.begin(), st->gradSnapshot.end());
                    weights.insert(st->params.begin(), st->params.end());
                }
                std::vector<std::byte> bytes;
                appendParams(bytes, grads);
                appendParams(bytes, weights);
                auto outcomes = mesh.gather(std::move(bytes), 0, options.recv_timeout_s);
                if (!outcomes) return outcomes.error();
                if (env.rank == 0) {
                    std::vector<StageOutcome> gathered;
                    for (const auto& rankBytes : *outcomes) {
                        std::size_t at = 0;
                        StageOutcome outcome;
                        outcome.grads = readParams(rankBytes, at);
                        outcome.weights = readParams(rankBytes, at);
                        gathered.push_back(std::move(outcome));
                    }
                    checkAgainstReference(model, batch, local, gathered, report);
                }
            }
            // Nobody tears down while a peer may still be reading from it.
            auto done = mesh.barrier(options.recv_timeout_s);
            if (!done) return done.error();
            return report;
        } catch (const std::exception& e) {
            return makeError("rank " + std::to_string(env.rank) + ": " + e.what());
        }
    }();
    if (!outcome) mesh.reportFailure(outcome.error().message);
    return outcome;
}

}  // namespace mario::exec
