#include "executor/TcpTransport.h"

#include <iterator>
#include <stdexcept>

#include "executor/TensorWire.h"

namespace mario::exec {
namespace {

// Message kinds on the mesh; the iteration keeps a late message of one step from being taken
// for the next one's.
constexpr std::int32_t kActivation = 1, kGradient = 2, kReduce = 3;

}  // namespace

TcpTransport::TcpTransport(dist::TcpMesh& mesh, const PipelineTopology& topology, std::function<int(int)> rankOfDevice,
                           std::map<std::string, std::vector<int>> groupRanks, int iteration, double timeout_s)
    : mesh_(mesh), topology_(topology), rankOfDevice_(std::move(rankOfDevice)), groupRanks_(std::move(groupRanks)),
      iteration_(iteration), timeout_s_(timeout_s) {}

int TcpTransport::groupIndex(const std::string& key) const {
    const auto it = groupRanks_.find(key);
    if (it == groupRanks_.end()) throw std::runtime_error("no REDUCE_GRAD group for layers " + key);
    return static_cast<int>(std::distance(groupRanks_.begin(), it));
}

void TcpTransport::send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) {
    const int peer = rankOfDevice_(topology_.deviceOf(stage));
    const dist::MessageKey key{direction == Direction::Forward ? kActivation : kGradient, stage, microbatch,
                               iteration_};
    mesh_.send(peer, key, tensorBytes(tensor));
}

torch::Tensor TcpTransport::receive(Direction direction, int stage, int microbatch, const std::string& waiter) {
    const int source = direction == Direction::Forward ? topology_.previousStage(stage) : topology_.nextStage(stage);
    if (source < 0) throw std::runtime_error("nothing is ever sent to stage " + std::to_string(stage));
    const int peer = rankOfDevice_(topology_.deviceOf(source));
    const dist::MessageKey key{direction == Direction::Forward ? kActivation : kGradient, stage, microbatch,
                               iteration_};
    auto bytes = mesh_.receive(peer, key, timeout_s_);
    if (!bytes)
        throw std::runtime_error(std::string("no ") + (direction == Direction::Forward ? "activation" : "gradient") +
                                 " from device " + std::to_string(topology_.deviceOf(source)) + " (" +
                                 bytes.error().message + ")");
    (void)waiter;  // the worker prefixes its own position to the message
    return tensorFromBytes(*bytes);
}

void TcpTransport::contribute(const ReduceGroup& group, const ParamMap& params) {
    const auto& ranks = groupRanks_.at(group.key);
    ParamMap& grads = contributed_[group.key];
    for (const auto& [name, p] : params) grads[name] = p.grad().defined() ? p.grad() : torch::zeros_like(p);
    std::vector<std::byte> bytes;
    appendParams(bytes, grads);
    const dist::MessageKey key{kReduce, groupIndex(group.key), 0, iteration_};
    for (int rank : ranks)
        if (rank != mesh_.rank()) mesh_.send(rank, key, bytes);
}

void TcpTransport::collect(const ReduceGroup& group, ParamMap& params) {
    const auto& ranks = groupRanks_.at(group.key);
    const dist::MessageKey key{kReduce, groupIndex(group.key), 0, iteration_};
    ParamMap sum;
    for (int rank : ranks) {
        ParamMap part;
        if (rank == mesh_.rank()) {
            part = contributed_.at(group.key);
        } else {
            auto bytes = mesh_.receive(rank, key, timeout_s_);
            if (!bytes) throw std::runtime_error("REDUCE_GRAD of layers " + group.key + ": " + bytes.error().message);
            std::size_t at = 0;
            part = readParams(*bytes, at);
        }
        for (auto& [name, g] : part) {
            auto& s = sum[name];
            s = s.defined() ? s + g.to(s.device()) : g.clone();
        }
    }
    torch::NoGradGuard noGrad;
    for (auto& [name, p] : params) {
        auto it = sum.find(name);
        if (it == sum.end()) continue;
        const torch::Tensor value = it->second.to(p.device(), p.scalar_type());
        if (p.grad().defined()) p.mutable_grad().copy_(value);
        else p.mutable_grad() = value.clone();
    }
    contributed_.erase(group.key);
}

void TcpTransport::fail(const std::string& message) {
    if (!failure_) failure_ = message;
    mesh_.abort(message);
}

}  // namespace mario::exec
