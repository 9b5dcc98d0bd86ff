#include "executor/RankStore.h"

#include <stdexcept>
#include <thread>

namespace mario::exec {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes bytesOf(const std::string& text) { return Bytes(text.begin(), text.end()); }
std::string textOf(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }

// c10d's messages run over several lines (a C++ stack under TORCH_SHOW_CPP_STACKTRACES); a
// refusal is one line.
std::chrono::milliseconds millis(double seconds) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

// torch.distributed's own prefix for a run on torchrun's agent store (torch/distributed/
// rendezvous.py): a restarted attempt never reads the keys of the one before it.
std::string runPrefix(const LaunchEnv& env) {
    return env.use_agent_store ? "/worker/attempt_" + std::to_string(env.restart_count) + "/mario" : "mario";
}

bool hosts(const LaunchEnv& env) { return env.rank == 0 && !env.use_agent_store; }

c10::intrusive_ptr<c10d::TCPStore> connectStore(const LaunchEnv& env, double timeout_s, bool server,
                                                bool countsAsWorker) {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(env.master_port);
    options.isServer = server;
    options.numWorkers = static_cast<std::size_t>(env.world_size);
    // The host waits for every rank (PyTorch's wait_for_workers); the agent's store has its own.
    options.waitWorkers = countsAsWorker && !env.use_agent_store;
    options.timeout = millis(timeout_s);
    const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
    try {
        return c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
    } catch (const std::exception& e) {
        throw std::runtime_error("rank " + std::to_string(env.rank) + (server ? " could not host" : " could not join") +
                                 " the run's store at " + where + (env.use_agent_store ? " (torchrun's agent store)" : "") +
                                 ": " + errorLine(e));
    }
}

}  // namespace

std::unique_ptr<RankStore> RankStore::open(const LaunchEnv& env, double timeout_s) {
    auto tcp = connectStore(env, timeout_s, hosts(env), true);
    StorePtr keys = c10::make_intrusive<c10d::PrefixStore>(runPrefix(env), tcp);
    return std::unique_ptr<RankStore>(new RankStore(env, timeout_s, std::move(tcp), std::move(keys)));
}

RankStore::RankStore(LaunchEnv env, double timeout_s, c10::intrusive_ptr<c10d::TCPStore> tcp, StorePtr keys)
    : env_(std::move(env)), timeout_s_(timeout_s), tcp_(std::move(tcp)), keys_(std::move(keys)) {}

RankStore::~RankStore() = default;

std::unique_ptr<RankStore> RankStore::connectAgain() const {
    auto tcp = connectStore(env_, timeout_s_, false, false);
    StorePtr keys = c10::make_intrusive<c10d::PrefixStore>(runPrefix(env_), tcp);
    return std::unique_ptr<RankStore>(new RankStore(env_, timeout_s_, std::move(tcp), std::move(keys)));
}

StorePtr RankStore::scoped(const std::string& prefix) const {
    return c10::make_intrusive<c10d::PrefixStore>(prefix, keys_);
}

Bytes RankStore::read(const std::string& key) {
    try {
        return keys_->get(key);
    } catch (const std::exception& e) {
        throw std::runtime_error("rank " + std::to_string(rank()) + " waited " + std::to_string(static_cast<int>(timeout_s_)) +
                                 " s for '" + key + "' in the run's store at " + env_.master_addr + ":" +
                                 std::to_string(env_.master_port) + ": " + errorLine(e) +
                                 (env_.use_agent_store ? " (is torchrun from the PyTorch this executor was built against?)"
                                                       : ""));
    }
}

std::vector<std::string> RankStore::allGather(const std::string& name, const std::string& mine) {
    keys_->set(name + "/" + std::to_string(rank()), bytesOf(mine));
    std::vector<std::string> all;
    for (int r = 0; r < worldSize(); ++r) all.push_back(textOf(read(name + "/" + std::to_string(r))));
    return all;
}

std::vector<Bytes> RankStore::gather(const std::string& name, Bytes mine) {
    std::vector<Bytes> all;
    if (rank() != 0) {
        keys_->set(name + "/" + std::to_string(rank()), mine);
        return all;
    }
    all.push_back(std::move(mine));
    // get waits for the key (up to the store's timeout); each is read once, then deleted, so a
    // long run's per-step numbers do not pile up in the store.
    for (int r = 1; r < worldSize(); ++r) {
        const std::string key = name + "/" + std::to_string(r);
        all.push_back(read(key));
        keys_->deleteKey(key);
    }
    return all;
}

void RankStore::barrier(const std::string& name) {
    // The last to arrive opens it; everyone waits for the opening.
    if (keys_->add(name + "/arrived", 1) == worldSize()) keys_->set(name + "/open", bytesOf("1"));
    keys_->wait({name + "/open"});
}

std::string RankStore::postFailure(const std::string& why) {
    try {
        // compareSet with an empty expected value sets only a key that does not exist yet.
        return textOf(keys_->compareSet("failure", {}, bytesOf(why)));
    } catch (const std::exception&) {
        return why;  // the store is gone (its host died): this rank's own line is all there is
    }
}

std::optional<std::string> RankStore::postedFailure() {
    if (!keys_->check({"failure"})) return std::nullopt;
    return textOf(keys_->get("failure"));
}

void RankStore::beat() { keys_->add("beat/" + std::to_string(rank()), 1); }

std::int64_t RankStore::beatsOf(int rank) { return keys_->add("beat/" + std::to_string(rank), 0); }

void RankStore::leave(double patience_s) {
    try {
        const int left = static_cast<int>(keys_->add("left", 1));
        if (!hosts(env_) || left == worldSize()) return;
        const auto deadline = std::chrono::steady_clock::now() + millis(patience_s);
        while (keys_->add("left", 0) < worldSize() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } catch (const std::exception&) {
    }
}

}  // namespace mario::exec
