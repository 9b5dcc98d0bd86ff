#pragma once
// Where a rank's incoming messages wait until someone asks for them: one FIFO per (sender, key),
// filled by the mesh's reader threads (and by sends to self), emptied by receivers. A receiver
// waits for three things at once -- its message, the sender's connection ending, an abort -- so
// a dead peer or a failed local worker ends the wait at once instead of at the timeout.
//
// One mutex and one condition variable for all senders: waking every waiter on each arrival is
// cheap at pipeline traffic rates (a few messages per micro-batch), and a single abort or close
// then reaches every waiter without bookkeeping of who waits for whom.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/util/Result.h"
#include "executor/dist/MessageKey.h"
#include "executor/dist/Socket.h"

namespace mario::dist {

class Mailbox {
public:
    Mailbox(int self, int worldSize);

    void deliver(int sender, const MessageKey& key, std::vector<std::byte> payload);

    // The sender's stream ended: waits for its messages that are not already here fail. `reason`
    // empty means an orderly end of stream; otherwise it says what broke ("Connection reset by
    // peer", a corrupt frame, a failed send). The first reason sticks.
    void closeSender(int sender, std::string reason);

    // Every wait, now and later, fails with `why`. The first reason sticks, so the failure that
    // started the collapse is the one reported, not its echoes.
    void abort(std::string why);

    // The oldest message (sender, key), waiting until `deadline`. Messages that arrived before the
    // sender closed are still handed out: a peer may send its last message and exit at once.
    // `timeoutSeconds` is only for the message, which names the timeout the caller asked for.
    Result<std::vector<std::byte>> take(int sender, const MessageKey& key, SteadyTime deadline, double timeoutSeconds);

    // What has gone wrong so far without anyone waiting for it: the abort's reason, else the
    // first sender whose stream ended ("rank 2 closed its connection (did it die?)"); nullopt
    // while every peer is connected. A poll, for watchers that never call take (PeerWatch.h).
    std::optional<std::string> failure() const;

private:
    struct SenderState {
        bool closed = false;
        std::string reason;
    };

    const int self_;
    mutable std::mutex mutex_;
    std::condition_variable arrived_;
    std::map<std::pair<int, MessageKey>, std::deque<std::vector<std::byte>>> queues_;
    std::vector<SenderState> senders_;
    std::optional<std::string> aborted_;
};

}  // namespace mario::dist
