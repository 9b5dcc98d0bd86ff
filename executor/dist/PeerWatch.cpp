#include "executor/dist/PeerWatch.h"

namespace mario::dist {
namespace {

std::optional<std::string> poll(const TcpMesh& mesh, const std::atomic<bool>& armed) {
    if (!armed.load()) return std::nullopt;
    return mesh.failure();
}

}  // namespace

PeerWatch::PeerWatch(const TcpMesh& mesh) : mesh_(mesh) {}

std::optional<std::string> PeerWatch::failure() const { return poll(mesh_, *armed_); }

std::function<std::optional<std::string>()> PeerWatch::hook() const {
    return [&mesh = mesh_, armed = armed_] { return poll(mesh, *armed); };
}

}  // namespace mario::dist
