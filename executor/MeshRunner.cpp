// The multi-process runner of before c10d: its own TCP rendezvous and mesh (executor/dist),
// TcpTransport on the CPU, NcclTransport with ids over the mesh on GPUs. Kept, as MARIO_DIST=mesh,
// only until the c10d runner (DistributedRunner.cpp) has passed the same tests everywhere.
#include "executor/DistributedRunner.h"

#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "core/model/RankLayout.h"
#include "core/schedule/PipelineTopology.h"
#include "executor/BlasThreads.h"
#include "executor/DeviceWorker.h"
#include "executor/GptModel.h"
#include "executor/LinkOrder.h"
#include "executor/NcclSetup.h"
#include "executor/RunRefusals.h"
#include "executor/RunSetup.h"
#include "executor/StepLoop.h"
#include "executor/TcpTransport.h"
#include "executor/TensorWire.h"
#include "executor/dist/PeerWatch.h"
#include "executor/dist/TcpMesh.h"
#ifdef MARIO_HAVE_NCCL
#include "executor/NcclTransport.h"
#endif

namespace mario::exec {

// DistributedRunner.cpp's, shared until this runner is retired.
Result<std::map<std::string, std::vector<int>>> reduceGroupRanks(const std::vector<StageRuntime>& stages,
                                                                 const PipelineTopology& topology, int replicas);

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

// This rank's one worker per step, on this thread (NCCL's CUDA context is this thread's). NCCL,
// when it carries the run, is kept for every step; the TCP transport is made per step, since its
// messages are keyed by the iteration.
class ProcessSteps final : public StepLoop {
public:
    struct Mesh {
        dist::TcpMesh& mesh;
        const RankPlace& place;
        std::function<int(int)> rankOfDevice;
        const std::map<std::string, std::vector<int>>& groups;
    };

    ProcessSteps(StepInputs inputs, const ExecutorOptions& options, StepReporting reporting, Mesh mesh,
                 std::map<int, StageRuntime*> mine, std::unique_ptr<Transport> nccl)
        : StepLoop(inputs, options, std::move(reporting)), mesh_(std::move(mesh)), mine_(std::move(mine)),
          nccl_(std::move(nccl)) {}

protected:
    std::vector<WorkerSeat> seat(int iteration) override {
        if (!nccl_)
            tcp_ = std::make_unique<TcpTransport>(mesh_.mesh, inputs().topology, mesh_.rankOfDevice, mesh_.groups,
                                                  iteration, options().recv_timeout_s);
        // No memory book: the GPU (or CPU process) is this rank's alone.
        return {WorkerSeat{mesh_.place.device, mesh_.place.replica, mine_, transport(), nullptr, 0}};
    }

    void runWorkers(const std::vector<std::unique_ptr<DeviceWorker>>& workers) override {
        for (const auto& worker : workers) worker->run();
    }

    std::optional<std::string> finishStep() override {
        transport()->finishIteration();
        return transport()->failure();
    }

    // One message per rank: step time, loss share, activation peak, allocator peak.
    Result<std::vector<WorkerMeasure>> gather(std::vector<WorkerMeasure> mine) override {
        const WorkerMeasure& m = mine.front();
        auto numbers =
            gatherNumbers(mesh_.mesh, {m.step_ms, m.loss_sum, m.peak_activation_bytes, m.peak_allocated_bytes},
                          options().recv_timeout_s);
        if (!numbers) return numbers.error();
        std::vector<WorkerMeasure> all;
        for (int r = 0; r < static_cast<int>(numbers->size()); ++r) {
            const auto& n = (*numbers)[r];
            all.push_back({placeOf(r, 1, inputs().replicas).device, n[0], n[1], n[2], n[3]});
        }
        return all;
    }

private:
    Transport* transport() const { return nccl_ ? nccl_.get() : tcp_.get(); }

    Mesh mesh_;
    std::map<int, StageRuntime*> mine_;
    std::unique_ptr<Transport> nccl_;
    std::unique_ptr<TcpTransport> tcp_;
};

}  // namespace

Result<RunReport> runOverMesh(const Plan& plan, const ExecutorOptions& options, const dist::LaunchEnv& env,
                              Backend backend) {
    auto topologyResult = PipelineTopology::build(plan);
    if (!topologyResult) return topologyResult.error();
    const PipelineTopology& topology = *topologyResult;
    const int devices = topology.deviceCount();
    // The CLI refuses these before the run (exit 2); the runner's other callers get the same line.
    if (auto refused = launchRefusal(plan, options, env)) return makeError(*refused);
    const int replicas = env.world_size / devices;
    const RankPlace place = placeOf(env.rank, 1, replicas);
    auto rankOfDevice = [replicas, replica = place.replica](int device) {
        return rankOf({device, replica, 0}, 1, replicas);
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
            local.device = backend == Backend::Cuda ? "cuda:" + std::to_string(env.local_rank) : "cpu";
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
            auto groups = reduceGroupRanks(stages, topology, replicas);
            if (!groups) return groups.error();
            std::map<int, StageRuntime*> mine;
            for (auto& st : stages)
                if (topology.deviceOf(st.index) == place.device) mine[st.index] = &st;

            const LinkOrder links = LinkOrder::build(plan, topology);
            std::unique_ptr<Transport> nccl;
            // NCCL's waits never notice a dead peer by themselves; the mesh does (PeerWatch.h).
            dist::PeerWatch peers(mesh);
#ifdef MARIO_HAVE_NCCL
            if (backend == Backend::Cuda) {
                NcclRankInputs rank;
                rank.rank = env.rank;
                rank.device = place.device;
                rank.replicas = replicas;
                rank.localRank = env.local_rank;
                rank.topology = &topology;
                rank.links = &links;
                rank.groups = &*groups;
                rank.messageShape = {mbs, options.model.seq, options.model.hidden};
                rank.dtype = static_cast<int>(dtype);
                rank.timeout_s = options.recv_timeout_s;
                nccl = NcclTransport::create(makeNcclSetup(rank, mesh, peers));
            }
#else
            if (backend == Backend::Cuda)
                return makeError(
                    "the CUDA backend is not built: nvcc and NCCL were not found when mario-executor was built");
#endif

            StepReporting reporting;
            reporting.events = options.on_event;
            reporting.iterationEvents = env.rank == 0;
            reporting.allocatorPeaks = backend == Backend::Cuda ? AllocatorPeaks::PerDevice : AllocatorPeaks::None;
            ProcessSteps steps({plan, topology, model, batch, stages, replicas}, options, std::move(reporting),
                               {mesh, place, rankOfDevice, *groups}, mine, std::move(nccl));
            if (auto ran = steps.run(report); !ran) return ran.error();
            // Every transfer has finished: peers that close from now on are done, not dead.
            peers.disarm();
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
