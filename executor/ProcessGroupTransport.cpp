#include "executor/ProcessGroupTransport.h"

#include <chrono>
#include <stdexcept>

namespace mario::exec {
namespace {

std::string describe(const LinkMessage& m) {
    return std::string(m.forward ? "activation" : "gradient") + " for stage " + std::to_string(m.stage) +
           " micro-batch " + std::to_string(m.microbatch);
}

// Gloo matches a receive by (source rank, tag): one tag per message of an iteration. NCCL
// ignores tags (it matches by order, which LinkBook keeps).
int tagOf(const LinkMessage& m) {
    constexpr int kStages = 1 << 12, kMicrobatches = 1 << 18;
    if (m.stage >= kStages || m.microbatch >= kMicrobatches)
        throw std::runtime_error("stage " + std::to_string(m.stage) + " micro-batch " + std::to_string(m.microbatch) +
                                 " is past what a message tag can hold (4,096 stages, 262,144 micro-batches)");
    return (m.microbatch << 13) | (m.stage << 1) | (m.forward ? 0 : 1);
}

}  // namespace

ProcessGroupTransport::ProcessGroupTransport(GroupTransportSetup setup, RankStore& store,
                                             std::unique_ptr<RankStore> watch)
    : setup_(std::move(setup)), store_(store), watchStore_(std::move(watch)),
      heartbeat_(setup_.peers, setup_.heartbeat_timeout_s, Heartbeat::Clock::now()), book_(*setup_.links, setup_.device) {
    watcher_ = std::thread([this] { this->watch(); });
}

ProcessGroupTransport::~ProcessGroupTransport() {
    stop_ = true;
    if (watcher_.joinable()) watcher_.join();
}

void ProcessGroupTransport::watch() {
    // Ten looks a second at the posted failure, and a heartbeat every fifth: a failure elsewhere
    // ends this rank's waits within a tenth of a second, for a few small requests to the store.
    for (int tick = 1; !stop_.load(); ++tick) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::optional<std::string> posted;
        try {
            if (tick % 5 == 0)
                if (auto silent = heartbeat_.look(*watchStore_, Heartbeat::Clock::now()))
                    posted = watchStore_->postFailure("rank " + std::to_string(setup_.rank) + ": " + *silent);
            if (!posted) posted = watchStore_->postedFailure();
        } catch (const std::exception& e) {
            posted = "rank " + std::to_string(setup_.rank) + " lost the run's store (did its host, rank 0, die?): " +
                     errorLine(e);
        }
        if (!posted) continue;
        abortAll(*posted);
        return;
    }
}

void ProcessGroupTransport::abortAll(const std::string& why) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = why;
    for (c10d::Work* work : waiting_) {
        try {
            work->abort();
        } catch (const std::exception&) {
            // Not every op can be aborted (Gloo's collectives): it ends at its peer's exit.
        }
    }
    if (setup_.abortGroups) setup_.abortGroups();
}

void ProcessGroupTransport::await(const WorkPtr& work, const std::string& what) {
    {
        std::lock_guard lock(mutex_);
        if (failure_) throw RunAborted();
        waiting_.insert(work.get());
    }
    bool done = false;
    std::optional<std::string> error;
    try {
        done = setup_.blockingWaits
                   ? work->wait(std::chrono::milliseconds(static_cast<std::int64_t>(setup_.timeout_s * 1000)))
                   : work->wait();
    } catch (const std::exception& e) {
        error = errorLine(e);
    }
    std::lock_guard lock(mutex_);
    waiting_.erase(work.get());
    if (done && !error) return;
    if (failure_) throw RunAborted();  // the watcher aborted it: another rank failed first
    throw std::runtime_error(what + ": " + error.value_or("aborted"));
}

void ProcessGroupTransport::post(int from, const LinkMessage& message) {
    if (arrived_.count(message)) return;
    for (const LinkMessage& m : book_.receivesToPost(from, message)) {
        std::vector<torch::Tensor> buffers{torch::empty(setup_.messageShape, setup_.messageOptions)};
        WorkPtr work = setup_.world->recv(buffers, peerRank(from), tagOf(m));
        arrived_[m] = {buffers.front(), std::move(work)};
    }
}

void ProcessGroupTransport::postIteration() {
    if (iterationPosted_) return;
    iterationPosted_ = true;
    if (!setup_.postReceivesEarly) return;
    for (const auto& [from, to] : setup_.links->links())
        if (to == setup_.device) post(from, setup_.links->messages(from, to).back());
}

void ProcessGroupTransport::send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) {
    const int to = setup_.topology->deviceOf(stage);
    const LinkMessage message{direction == Direction::Forward, stage, microbatch};
    // A repeated SEND of one message must not reach the group: no receive would match it.
    if (!book_.firstSend(to, message)) return;
    postIteration();
    std::vector<torch::Tensor> tensors{tensor.contiguous()};
    WorkPtr work = setup_.world->send(tensors, peerRank(to), tagOf(message));
    sent_.push_back({tensors.front(), std::move(work),
                     "sending the " + describe(message) + " to device " + std::to_string(to) + " (rank " +
                         std::to_string(peerRank(to)) + ")"});
}

torch::Tensor ProcessGroupTransport::receive(Direction direction, int stage, int microbatch,
                                             const std::string& waiter) {
    const auto& topology = *setup_.topology;
    const int source = direction == Direction::Forward ? topology.previousStage(stage) : topology.nextStage(stage);
    if (source < 0) throw std::runtime_error(waiter + ": nothing is ever sent to this stage");
    const int from = topology.deviceOf(source);
    const LinkMessage message{direction == Direction::Forward, stage, microbatch};
    postIteration();
    post(from, message);
    Posted posted = std::move(arrived_.at(message));
    arrived_.erase(message);
    book_.taken(message);
    await(posted.work, "no " + std::string(message.forward ? "activation" : "gradient") + " from device " +
                           std::to_string(from) + " (rank " + std::to_string(peerRank(from)) + ")");
    return posted.buffer;
}

void ProcessGroupTransport::contribute(const ReduceGroup& group, const ParamMap& params) {
    auto it = setup_.reduceGroups.find(group.key);
    if (it == setup_.reduceGroups.end()) return;  // no other rank holds these layers
    // Every member flattens the same parameters in the same (sorted) order; one without a
    // gradient contributes zeros.
    std::vector<torch::Tensor> parts;
    for (const auto& [name, p] : params) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        parts.push_back(p.grad().reshape({-1}));
    }
    std::vector<torch::Tensor> flat{torch::cat(parts)};
    WorkPtr work = it->second->allreduce(flat);
    reducing_[group.key] = {flat.front(), std::move(work)};
}

void ProcessGroupTransport::collect(const ReduceGroup& group, ParamMap& params) {
    if (!setup_.reduceGroups.count(group.key)) return;  // this rank's gradients are the sum
    auto it = reducing_.find(group.key);
    if (it == reducing_.end()) throw std::runtime_error("OPT before REDUCE_GRAD of layers " + group.key);
    Reducing reducing = std::move(it->second);
    reducing_.erase(it);
    await(reducing.work, "REDUCE_GRAD of layers " + group.key);
    torch::NoGradGuard noGrad;
    std::int64_t at = 0;
    for (auto& [name, p] : params) {
        const std::int64_t n = p.numel();
        p.mutable_grad().copy_(reducing.flat.slice(0, at, at + n).view_as(p));
        at += n;
    }
}

void ProcessGroupTransport::fail(const std::string& message) {
    // The first line posted stands for the whole world; this rank reports it too.
    const std::string standing = store_.postFailure("rank " + std::to_string(setup_.rank) + ": " + message);
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = standing;
}

std::optional<std::string> ProcessGroupTransport::failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
}

void ProcessGroupTransport::finishIteration() {
    std::vector<Sent> sent = std::move(sent_);
    sent_.clear();
    for (const Sent& s : sent) await(s.work, s.what);
    if (setup_.finishDevice) setup_.finishDevice();
    book_.beginIteration();
    iterationPosted_ = false;
}

}  // namespace mario::exec
