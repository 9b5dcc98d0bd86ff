#pragma once
// The bookkeeping of an order-matched transport (NCCL) on one device, apart from the transfers
// themselves so that it is tested without a GPU: which sends are new this iteration, and which
// receives to post, in the sender's order, when the program asks for one message (earlier ones
// on the same link are posted first and wait until taken; see LinkOrder.h).
#include <map>
#include <set>
#include <vector>

#include "executor/LinkOrder.h"

namespace mario::exec {

class LinkBook {
public:
    LinkBook(const LinkOrder& order, int device) : order_(order), device_(device) {}

    // True the first time `message` goes to device `to` this iteration; a repeated SEND must
    // not reach NCCL, which would wait for a receive that never comes.
    bool firstSend(int to, const LinkMessage& message);

    // The receives to post from device `from` so that `message` is among them, in link order;
    // empty when it is posted already and waiting. Throws std::runtime_error when `from` never
    // sends it, or when it was taken already this iteration.
    std::vector<LinkMessage> receivesToPost(int from, const LinkMessage& message);

    // The program took `message`: it no longer waits.
    void taken(const LinkMessage& message);

    // Starts the next iteration. Throws when a posted message was never taken (its sender sends
    // more than the plan receives), which would otherwise be matched against the next iteration.
    void beginIteration();

private:
    const LinkOrder& order_;
    int device_;
    std::map<int, std::set<LinkMessage>> sent_;
    std::map<int, std::size_t> nextToPost_;  // per sending device
    std::set<LinkMessage> waiting_;          // posted, not yet taken
    std::set<LinkMessage> takenThisIteration_;
};

}  // namespace mario::exec
