#include "executor/NcclTransport.h"

#include "executor/LinkBook.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <torch/cuda.h>

namespace mario::exec {
namespace {

using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const std::string& what) {
    if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
}
void check(ncclResult_t r, const std::string& what) {
    if (r != ncclSuccess) throw std::runtime_error(what + ": " + ncclGetErrorString(r));
}

ncclDataType_t ncclTypeOf(torch::ScalarType type) {
    switch (type) {
        case torch::kFloat64: return ncclFloat64;
        case torch::kFloat32: return ncclFloat32;
        case torch::kBFloat16: return ncclBfloat16;
        case torch::kFloat16: return ncclFloat16;
        default: throw std::runtime_error("NCCL cannot carry tensors of this dtype");
    }
}

cudaEvent_t newEvent() {
    cudaEvent_t event = nullptr;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    return event;
}

// torch computes on the default stream of this thread (checked in create), so the compute side
// of every bridge is stream 0.
constexpr cudaStream_t kCompute = nullptr;

struct Comm {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
};

struct InFlight {
    torch::Tensor keep;  // a send's source, alive until NCCL has read it
    cudaEvent_t done = nullptr;
    Clock::time_point posted;
    std::string what;
};

std::string describe(const LinkMessage& m) {
    return std::string(m.forward ? "activation" : "gradient") + " for stage " + std::to_string(m.stage) +
           " micro-batch " + std::to_string(m.microbatch);
}

}  // namespace

struct NcclTransport::Impl {
    NcclSetup setup;
    torch::TensorOptions options;
    std::map<int, Comm> outLinks, inLinks;  // by the device at the other end
    std::map<std::string, Comm> groups;
    std::vector<Comm*> all;
    std::unique_ptr<LinkBook> book;
    std::map<LinkMessage, std::pair<torch::Tensor, cudaEvent_t>> arrived;  // posted, not yet taken
    std::map<std::string, cudaEvent_t> reduced;

    mutable std::mutex mutex;  // guards inflight and failure (the watchdog reads both)
    std::deque<InFlight> inflight;
    std::optional<std::string> failure;
    bool aborted = false;
    std::atomic<bool> stop{false};
    std::thread watchdog;

    void track(torch::Tensor keep, cudaEvent_t done, std::string what) {
        std::lock_guard lock(mutex);
        inflight.push_back({std::move(keep), done, Clock::now(), std::move(what)});
    }

    void throwIfFailed() const {
        std::lock_guard lock(mutex);
        if (failure) throw std::runtime_error(*failure);
    }

    // Caller holds the mutex. Aborting makes hung NCCL kernels return, so the compute stream
    // drains and the process can report instead of hanging.
    void abortAll(const std::string& why) {
        if (!failure) failure = why;
        if (aborted) return;
        aborted = true;
        for (Comm* c : all)
            if (c->comm) ncclCommAbort(c->comm), c->comm = nullptr;
    }

    // Caller holds the mutex.
    void retireFinished() {
        while (!inflight.empty() && cudaEventQuery(inflight.front().done) == cudaSuccess) {
            cudaEventDestroy(inflight.front().done);
            inflight.pop_front();
        }
    }

    void watch() {
        cudaSetDevice(setup.cudaDevice);  // events are queried in this thread too
        while (!stop.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            // Outside this transport's lock: the poll takes the mesh's own.
            WatchdogObservation seen;
            if (setup.peerFailure) seen.peerFailure = setup.peerFailure();
            std::lock_guard lock(mutex);
            if (aborted) continue;
            retireFinished();
            seen.rank = setup.rank;
            seen.timeout_s = setup.timeout_s;
            if (!inflight.empty()) {
                seen.oldestInFlight_s = std::chrono::duration<double>(Clock::now() - inflight.front().posted).count();
                seen.oldestWhat = inflight.front().what;
            }
            for (Comm* c : all) {
                ncclResult_t async = ncclSuccess;
                if (c->comm && ncclCommGetAsyncError(c->comm, &async) == ncclSuccess && async != ncclSuccess &&
                    async != ncclInProgress) {
                    seen.ncclError = ncclGetErrorString(async);
                    break;
                }
            }
            if (auto why = watchdogVerdict(seen)) abortAll(*why);
        }
    }
};

std::unique_ptr<NcclTransport> NcclTransport::create(const NcclSetup& setup) {
    if (!torch::cuda::is_available())
        throw std::runtime_error("this LibTorch has no CUDA support (Debian's libtorch is CPU-only); build "
                                 "mario-executor against a CUDA PyTorch's LibTorch");
    check(cudaSetDevice(setup.cudaDevice), "cudaSetDevice(" + std::to_string(setup.cudaDevice) + ")");
    if (setup.checkGpus) {
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        char bus[32] = {};
        check(cudaDeviceGetPCIBusId(bus, sizeof bus, setup.cudaDevice), "cudaDeviceGetPCIBusId");
        if (auto why = setup.checkGpus(std::string(host) + "/" + bus)) throw std::runtime_error(*why);
    }
    auto impl = std::make_unique<Impl>();
    impl->setup = setup;
    impl->book = std::make_unique<LinkBook>(*setup.links, setup.device);
    impl->options = torch::TensorOptions()
                        .device(torch::kCUDA, setup.cudaDevice)
                        .dtype(static_cast<torch::ScalarType>(setup.dtype));

    // Every rank lists the same communicators in the same order; rank 0 makes their ids.
    const std::size_t count = setup.linkRanks.size() + setup.reduceGroups.size();
    std::vector<std::byte> ids;
    if (setup.rank == 0) {
        ids.resize(count * sizeof(ncclUniqueId));
        for (std::size_t i = 0; i < count; ++i) {
            ncclUniqueId id;
            check(ncclGetUniqueId(&id), "ncclGetUniqueId");
            std::memcpy(ids.data() + i * sizeof id, &id, sizeof id);
        }
    }
    ids = setup.broadcast(std::move(ids));
    if (ids.size() != count * sizeof(ncclUniqueId))
        throw std::runtime_error("rank 0 sent " + std::to_string(ids.size() / sizeof(ncclUniqueId)) +
                                 " NCCL ids, this rank expects " + std::to_string(count) +
                                 " (do all ranks run the same plan?)");
    auto idAt = [&](std::size_t i) {
        ncclUniqueId id;
        std::memcpy(&id, ids.data() + i * sizeof id, sizeof id);
        return id;
    };
    std::map<int, int> deviceOfRank;
    for (int d = 0; d < setup.topology->deviceCount(); ++d) deviceOfRank[setup.rankOfDevice(d)] = d;

    check(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t i = 0; i < setup.linkRanks.size(); ++i) {
        const auto [from, to] = setup.linkRanks[i];
        if (from != setup.rank && to != setup.rank) continue;
        Comm& c = from == setup.rank ? impl->outLinks[deviceOfRank.at(to)] : impl->inLinks[deviceOfRank.at(from)];
        check(ncclCommInitRank(&c.comm, 2, idAt(i), from == setup.rank ? 0 : 1), "ncclCommInitRank (link)");
    }
    for (std::size_t g = 0; g < setup.reduceGroups.size(); ++g) {
        const auto& [key, ranks] = setup.reduceGroups[g];
        for (std::size_t k = 0; k < ranks.size(); ++k) {
            if (ranks[k] != setup.rank) continue;
            check(ncclCommInitRank(&impl->groups[key].comm, static_cast<int>(ranks.size()),
                                   idAt(setup.linkRanks.size() + g), static_cast<int>(k)),
                  "ncclCommInitRank (REDUCE_GRAD group " + key + ")");
        }
    }
    check(ncclGroupEnd(), "ncclGroupEnd (creating communicators)");
    for (auto* map : {&impl->outLinks, &impl->inLinks})
        for (auto& [device, c] : *map) impl->all.push_back(&c);
    for (auto& [key, c] : impl->groups) impl->all.push_back(&c);
    for (Comm* c : impl->all) check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    Impl* raw = impl.get();
    impl->watchdog = std::thread([raw] { raw->watch(); });
    return std::unique_ptr<NcclTransport>(new NcclTransport(std::move(impl)));
}

NcclTransport::NcclTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NcclTransport::~NcclTransport() {
    impl_->stop = true;
    if (impl_->watchdog.joinable()) impl_->watchdog.join();
    std::lock_guard lock(impl_->mutex);
    for (Comm* c : impl_->all) {
        if (c->comm) ncclCommDestroy(c->comm);
        if (c->stream) cudaStreamDestroy(c->stream);
    }
    for (auto& f : impl_->inflight) cudaEventDestroy(f.done);
    for (auto& [m, a] : impl_->arrived) cudaEventDestroy(a.second);
}

void NcclTransport::send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) {
    Impl& s = *impl_;
    s.throwIfFailed();
    const int to = s.setup.topology->deviceOf(stage);
    const LinkMessage message{direction == Direction::Forward, stage, microbatch};
    if (!s.book->firstSend(to, message)) return;
    auto link = s.outLinks.find(to);
    if (link == s.outLinks.end()) throw std::runtime_error("no communicator to device " + std::to_string(to));
    torch::Tensor source = tensor.contiguous();
    cudaEvent_t ready = newEvent();
    check(cudaEventRecord(ready, kCompute), "cudaEventRecord");
    check(cudaStreamWaitEvent(link->second.stream, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);  // the wait has captured it
    check(ncclSend(source.data_ptr(), source.numel(), ncclTypeOf(source.scalar_type()), 1, link->second.comm,
                   link->second.stream),
          "ncclSend");
    cudaEvent_t done = newEvent();
    check(cudaEventRecord(done, link->second.stream), "cudaEventRecord");
    s.track(source, done, "sending the " + describe(message) + " to device " + std::to_string(to));
}

torch::Tensor NcclTransport::receive(Direction direction, int stage, int microbatch, const std::string& waiter) {
    Impl& s = *impl_;
    s.throwIfFailed();
    const auto& topology = *s.setup.topology;
    const int source = direction == Direction::Forward ? topology.previousStage(stage) : topology.nextStage(stage);
    if (source < 0) throw std::runtime_error(waiter + ": nothing is ever sent to this stage");
    const int from = topology.deviceOf(source);
    const LinkMessage message{direction == Direction::Forward, stage, microbatch};
    // Post receives in the sender's order up to this one; earlier ones wait in `arrived`.
    const auto post = s.book->receivesToPost(from, message);
    if (!post.empty()) {
        Comm& link = s.inLinks.at(from);
        for (const LinkMessage& m : post) {
            torch::Tensor buffer = torch::empty(s.setup.messageShape, s.options);
            check(ncclRecv(buffer.data_ptr(), buffer.numel(), ncclTypeOf(buffer.scalar_type()), 0, link.comm,
                           link.stream),
                  "ncclRecv");
            cudaEvent_t done = newEvent();
            check(cudaEventRecord(done, link.stream), "cudaEventRecord");
            s.arrived[m] = {buffer, done};
            cudaEvent_t tracked = newEvent();
            check(cudaEventRecord(tracked, link.stream), "cudaEventRecord");
            s.track({}, tracked, waiter + " receiving the " + describe(m) + " from device " + std::to_string(from));
        }
    }
    auto [tensor, done] = s.arrived.at(message);
    s.arrived.erase(message);
    s.book->taken(message);
    check(cudaStreamWaitEvent(kCompute, done, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(done);
    return tensor;
}

void NcclTransport::contribute(const ReduceGroup& group, const ParamMap& params) {
    Impl& s = *impl_;
    s.throwIfFailed();
    auto it = s.groups.find(group.key);
    if (it == s.groups.end()) throw std::runtime_error("no REDUCE_GRAD communicator for layers " + group.key);
    Comm& c = it->second;
    cudaEvent_t ready = newEvent();
    check(cudaEventRecord(ready, kCompute), "cudaEventRecord");
    check(cudaStreamWaitEvent(c.stream, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);
    // Every rank must reduce the same tensors in the same order: names are sorted (std::map)
    // and a parameter without a gradient contributes zeros.
    check(ncclGroupStart(), "ncclGroupStart");
    for (const auto& [name, p] : params) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        const torch::Tensor& g = p.grad();
        if (!g.is_contiguous()) throw std::runtime_error("gradient of " + name + " is not contiguous");
        check(ncclAllReduce(g.data_ptr(), g.data_ptr(), g.numel(), ncclTypeOf(g.scalar_type()), ncclSum, c.comm,
                            c.stream),
              "ncclAllReduce(" + name + ")");
    }
    check(ncclGroupEnd(), "ncclGroupEnd (REDUCE_GRAD)");
    cudaEvent_t done = newEvent();
    check(cudaEventRecord(done, c.stream), "cudaEventRecord");
    s.reduced[group.key] = done;
    cudaEvent_t tracked = newEvent();
    check(cudaEventRecord(tracked, c.stream), "cudaEventRecord");
    s.track({}, tracked, "REDUCE_GRAD of layers " + group.key);
}

void NcclTransport::collect(const ReduceGroup& group, ParamMap&) {
    Impl& s = *impl_;
    s.throwIfFailed();
    auto it = s.reduced.find(group.key);
    if (it == s.reduced.end()) throw std::runtime_error("OPT before REDUCE_GRAD of layers " + group.key);
    check(cudaStreamWaitEvent(kCompute, it->second, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(it->second);
    s.reduced.erase(it);
}

void NcclTransport::fail(const std::string& message) {
    std::lock_guard lock(impl_->mutex);
    impl_->abortAll(message);
}

void NcclTransport::finishIteration() {
    for (;;) {
        {
            std::lock_guard lock(impl_->mutex);
            if (impl_->failure) throw std::runtime_error(*impl_->failure);
            impl_->retireFinished();
            if (impl_->inflight.empty()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    check(cudaStreamSynchronize(kCompute), "cudaStreamSynchronize");
    impl_->book->beginIteration();
}

std::optional<std::string> NcclTransport::failure() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->failure;
}

}  // namespace mario::exec
