#pragma once
// The executor's multi-process transport: after a rendezvous at rank 0 (Rendezvous.h), every pair
// of ranks shares one TCP connection, and messages are addressed by (peer, MessageKey).
//
// Threading. One reader thread per peer turns its stream into frames and files them in the
// Mailbox; receive() only waits on the mailbox, so any number of threads may receive at once
// (each for its own key) and no sender ever blocks on a receiver that is not reading: the reader
// drains the socket whatever the program is doing. send() holds a mutex per peer while it writes
// one frame, so threads may share a peer without interleaving bytes.
//
// Failure. A peer's end of stream (it exited, crashed or destroyed its mesh) fails every wait on
// that peer at once, not at the timeout; abort() fails every wait on this rank. Messages that
// arrived before a close are still delivered. Every error is one line naming the ranks and the
// key, so the first rank to report says what went wrong where; reportFailure() passes that line
// on to every peer, so the whole world reports the same first cause.
//
// Teardown. Shut down after a barrier(): the destructor cuts the connections at once, and a
// message still in flight towards a rank that has torn down is lost.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/util/Result.h"
#include "executor/dist/LaunchEnv.h"
#include "executor/dist/Mailbox.h"
#include "executor/dist/MessageKey.h"
#include "executor/dist/Socket.h"

namespace mario::dist {

class TcpMesh {
public:
    // Rendezvous and full mesh, all within timeout_s. A world of one opens no socket.
    static Result<std::unique_ptr<TcpMesh>> connect(const LaunchEnv& env, double timeout_s);

    ~TcpMesh();
    TcpMesh(const TcpMesh&) = delete;
    TcpMesh& operator=(const TcpMesh&) = delete;

    int rank() const { return rank_; }
    int worldSize() const { return world_; }

    // Queues one message for `peer` and returns once it is in the kernel's hands (not when the
    // peer has read it). To self it goes straight to the local mailbox. A failed write does not
    // throw: it marks the peer broken, so the next receive from it fails with the reason.
    // key.kind must be >= 0 (negative kinds are the collectives'); a peer outside the world or a
    // negative kind is a programming error and throws std::invalid_argument.
    void send(int peer, const MessageKey& key, std::vector<std::byte> payload);

    // The oldest message from `peer` with exactly `key`, waiting up to timeout_s. Fails on
    // timeout ("no message <1/0/3/0> from rank 2 within 30 s"), when the peer's connection ends
    // ("rank 2 closed its connection before sending <1/0/3/0> (did it die?)"), or after abort().
    Result<std::vector<std::byte>> receive(int peer, const MessageKey& key, double timeout_s);

    // Fails every current and later receive on this rank with `why` (the first reason sticks).
    // For a local worker that failed while others wait. Peers learn of it when this process
    // exits and its connections close.
    void abort(std::string why);
    // abort(why), and tell every peer: each of them aborts with the same `why`, so a rank that
    // only saw its neighbour go quiet reports the failure that started it ("rank 2 closed its
    // connection ... (did it die?)"), not "rank 1 closed its connection". Best effort: a peer
    // already gone is skipped. Call it once, when this rank gives up.
    void reportFailure(std::string why);
    // Polls what receive() would fail with: a peer's failure notice or this rank's abort, else
    // the first peer whose connection ended; nullopt while the world is whole. For watchers of a
    // run whose data does not go through the mesh (NCCL: PeerWatch.h).
    std::optional<std::string> failure() const { return mailbox_.failure(); }

    // Collectives. Every rank must call the same collectives in the same order (as in MPI): each
    // call takes the next sequence number, which keeps consecutive collectives apart on the wire.
    // Not for concurrent use from several threads of one rank.

    // Rank 0's bytes, on every rank (rank 0 gets its own back).
    Result<std::vector<std::byte>> broadcast(std::vector<std::byte> fromRankZero, double timeout_s);
    // Returns once every rank has entered it; true on success (Result has no void form).
    Result<bool> barrier(double timeout_s);
    // `root` gets every rank's bytes in rank order (its own included); the others get an empty list.
    Result<std::vector<std::vector<std::byte>>> gather(std::vector<std::byte> mine, int root, double timeout_s);

private:
    // One connected peer: its socket, the lock that keeps frames whole, and its reader thread.
    struct Peer {
        Socket socket;
        std::mutex writing;
        std::thread reader;
    };

    TcpMesh(int rank, int world);
    void startReaders();
    void readLoop(int peer);
    void sendFrame(int peer, const MessageKey& key, std::vector<std::byte> payload);
    void writeFrame(int peer, const MessageKey& key, std::span<const std::byte> payload);
    Result<std::vector<std::byte>> receiveUntil(int peer, const MessageKey& key, SteadyTime deadline, double timeout_s);
    void checkPeer(int peer, const char* what) const;
    MessageKey nextCollectiveKey(std::int32_t kind, int root);

    const int rank_;
    const int world_;
    Mailbox mailbox_;
    std::vector<std::unique_ptr<Peer>> peers_;  // indexed by rank; this rank's slot is null
    std::atomic<bool> stopping_{false};
    std::atomic<std::int32_t> collectiveSequence_{0};
};

}  // namespace mario::dist
