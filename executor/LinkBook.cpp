#include "executor/LinkBook.h"

#include <stdexcept>
#include <string>

namespace mario::exec {
namespace {

std::string describe(const LinkMessage& m) {
    return std::string(m.forward ? "activation" : "gradient") + " for stage " + std::to_string(m.stage) +
           " micro-batch " + std::to_string(m.microbatch);
}

}  // namespace

bool LinkBook::firstSend(int to, const LinkMessage& message) { return sent_[to].insert(message).second; }

std::vector<LinkMessage> LinkBook::receivesToPost(int from, const LinkMessage& message) {
    if (waiting_.count(message)) return {};
    if (takenThisIteration_.count(message))
        throw std::runtime_error("the " + describe(message) + " was received already");
    const auto position = order_.position(from, device_, message);
    if (!position)
        throw std::runtime_error("device " + std::to_string(from) + " never sends the " + describe(message) +
                                 " (no SEND in its program)");
    std::vector<LinkMessage> post;
    const auto& messages = order_.messages(from, device_);
    for (auto& next = nextToPost_[from]; next <= *position; ++next) {
        post.push_back(messages[next]);
        waiting_.insert(messages[next]);
    }
    return post;
}

void LinkBook::taken(const LinkMessage& message) {
    waiting_.erase(message);
    takenThisIteration_.insert(message);
}

void LinkBook::beginIteration() {
    if (!waiting_.empty())
        throw std::runtime_error("the " + describe(*waiting_.begin()) +
                                 " arrived but no RECV took it (its sender sends more than the plan receives)");
    sent_.clear();
    nextToPost_.clear();
    takenThisIteration_.clear();
}

}  // namespace mario::exec
