#include "executor/dist/Mailbox.h"

namespace mario::dist {

Mailbox::Mailbox(int self, int worldSize) : self_(self), senders_(static_cast<std::size_t>(worldSize)) {}

void Mailbox::deliver(int sender, const MessageKey& key, std::vector<std::byte> payload) {
    {
        std::lock_guard lock(mutex_);
        queues_[{sender, key}].push_back(std::move(payload));
    }
    arrived_.notify_all();
}

void Mailbox::closeSender(int sender, std::string reason) {
    {
        std::lock_guard lock(mutex_);
        SenderState& state = senders_.at(static_cast<std::size_t>(sender));
        if (state.closed) return;
        state.closed = true;
        state.reason = std::move(reason);
    }
    arrived_.notify_all();
}

void Mailbox::abort(std::string why) {
    {
        std::lock_guard lock(mutex_);
        if (aborted_) return;
        aborted_ = std::move(why);
    }
    arrived_.notify_all();
}

Result<std::vector<std::byte>> Mailbox::take(int sender, const MessageKey& key, SteadyTime deadline,
                                             double timeoutSeconds) {
    const std::pair<int, MessageKey> slot{sender, key};
    std::unique_lock lock(mutex_);
    const SenderState& state = senders_.at(static_cast<std::size_t>(sender));
    auto ready = [&] { return aborted_ || state.closed || queues_.count(slot) > 0; };
    // wait_until on steady_clock: a wall-clock jump (NTP) neither cuts a wait short nor stretches it.
    arrived_.wait_until(lock, deadline, ready);

    // An abort wins even over a message that is already here: the run is over, and the caller
    // must stop rather than carry on with one more step.
    if (aborted_) return makeError(*aborted_);
    if (auto it = queues_.find(slot); it != queues_.end()) {
        std::vector<std::byte> payload = std::move(it->second.front());
        it->second.pop_front();
        if (it->second.empty()) queues_.erase(it);
        return payload;
    }
    const std::string who = "rank " + std::to_string(sender);
    if (state.closed && sender != self_) {
        if (state.reason.empty())
            return makeError(who + " closed its connection before sending " + describe(key) + " (did it die?)");
        return makeError("the connection to " + who + " broke before it sent " + describe(key) + ": " + state.reason);
    }
    return makeError("no message " + describe(key) + " from " + who + " within " + formatSeconds(timeoutSeconds) +
                     " s");
}

std::optional<std::string> Mailbox::failure() const {
    std::lock_guard lock(mutex_);
    if (aborted_) return aborted_;
    for (std::size_t sender = 0; sender < senders_.size(); ++sender) {
        const SenderState& state = senders_[sender];
        if (!state.closed || static_cast<int>(sender) == self_) continue;
        const std::string who = "rank " + std::to_string(sender);
        if (state.reason.empty()) return who + " closed its connection (did it die?)";
        return "the connection to " + who + " broke: " + state.reason;
    }
    return std::nullopt;
}

}  // namespace mario::dist
