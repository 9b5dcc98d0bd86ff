#pragma once
// Where the device threads of one process meet (CPU backend, single-GPU mode): SEND/RECV
// mailboxes keyed by (replica, direction, receiving stage, micro-batch) and the REDUCE_GRAD
// barrier keyed by layer slice. One mutex, and a condition variable per mailbox and per reduce
// group: a message wakes only the thread that receives it. One condition variable shared by all
// woke every waiting thread on every message, so a 4,096-device plan spent its time in wake-ups
// (each of about 50,000 messages woke thousands of threads that went back to sleep) and its
// receives passed the 30 s timeout, reported as a sender that never sent. A failure wakes every
// waiter (each mailbox's and group's), so a failing device still ends the whole run instead of
// leaving the others blocked. Every wait has a deadline: a missing sender is an error naming the
// instruction, never a hang.
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <torch/torch.h>

#include "executor/GptModel.h"
#include "executor/StreamSync.h"
#include "executor/Transport.h"

namespace mario::exec {

class Exchange {
public:
    explicit Exchange(double timeoutSeconds) : timeout_(std::chrono::duration<double>(timeoutSeconds)) {}

    void post(int replica, Direction direction, int stage, int microbatch, torch::Tensor tensor) {
        auto ready = markReady(tensor);
        std::lock_guard lock(mutex_);
        Mailbox& box = mail_[{replica, direction, stage, microbatch}];
        box.parcel = {std::move(tensor), std::move(ready)};
        box.full = true;
        box.wake.notify_all();  // its receiver, and nobody else
    }

    // Blocks until the tensor for (direction, stage, microbatch) arrives; throws on timeout.
    // `waiter` ("device 1 at 1RECV_F0") is listed in other devices' timeout messages: when a
    // send is missing, every device downstream times out at about the same moment, so the
    // message names all blocked devices, not only the first to give up.
    torch::Tensor take(int replica, Direction direction, int stage, int microbatch, const std::string& waiter) {
        std::unique_lock lock(mutex_);
        const Key key{replica, direction, stage, microbatch};
        // std::map keeps the node where it is while others come and go, so the reference holds
        // across the wait; the box goes once its last waiter is done with it.
        Mailbox& box = mail_[key];
        ++box.waiters;
        waiting_.insert(waiter);
        const bool ready = waitFor(box.wake, lock, [&] { return aborted_ || box.full; });
        --box.waiters;
        // A waiter that timed out stays listed: it is still blocked while it reports, and another
        // device's report racing with it must name it.
        if (ready || aborted_) waiting_.erase(waiter);
        if (aborted_) throw RunAborted();
        if (!ready)
            throw std::runtime_error("no " + std::string(direction == Direction::Forward ? "activation" : "gradient") +
                                     " arrived within " + seconds() + " s (its sender never sent it)" + blockedList());
        Parcel parcel = std::move(box.parcel);
        box.full = false;
        if (box.waiters == 0) mail_.erase(key);
        lock.unlock();
        awaitReady(parcel.ready, parcel.tensor);
        return parcel.tensor;
    }

    // REDUCE_GRAD is split in two so that it never deadlocks: the generators append each
    // device's REDUCE_GRADs in stage order (Chimera's device 1 reduces stage 1 then 6, device 2
    // stage 2 then 5), so a blocking barrier per REDUCE_GRAD would wait in a cycle. `contribute`
    // registers a replica's gradients and returns; the last of `participants` to arrive sums
    // them in place, into every replica's own gradients, as NCCL's all-reduce does: no buffer
    // beside them (a separate sum held a gradient-sized copy from the first contribution to the
    // last OPT, which put Chimera's peaks 8 MB, 19%, above the simulation's once checkpointing
    // had lowered its activations). A replica's gradients are final once it contributes and
    // are read again only by its OPT, after `collect`. `collect` (at OPT, or at the end of the
    // program) waits until the sum is done.
    void contribute(const std::string& key, int participants, const ParamMap& params) {
        if (!params.empty()) finishCurrentStream(params.begin()->second);  // gradients final
        std::lock_guard lock(mutex_);
        Group& group = groups_[key];
        group.members.push_back(params);
        if (++group.arrived == participants) {
            sumInPlace(group);
            group.wake.notify_all();  // only the group's collectors wait for this
        }
    }

    void collect(const std::string& key, int participants) {
        std::unique_lock lock(mutex_);
        Group& group = groups_[key];
        ++group.waiters;
        const bool ready = waitFor(group.wake, lock, [&] { return aborted_ || group.arrived >= participants; });
        --group.waiters;
        if (aborted_) throw RunAborted();
        if (!ready)
            throw std::runtime_error("only " + std::to_string(group.arrived) + " of " + std::to_string(participants) +
                                     " replicas reached REDUCE_GRAD within " + seconds() + " s" + blockedList());
        if (++group.done == participants && group.waiters == 0) groups_.erase(key);
    }

    // Records the first failure and wakes every waiter.
    void fail(const std::string& message) {
        std::lock_guard lock(mutex_);
        if (!aborted_) failure_ = message;
        aborted_ = true;
        for (auto& [key, box] : mail_) box.wake.notify_all();
        for (auto& [key, group] : groups_) group.wake.notify_all();
    }

    std::optional<std::string> failure() const {
        std::lock_guard lock(mutex_);
        return failure_;
    }

    // Receives waiting now (for the tests, which start posting once every receiver waits).
    std::size_t waitingReceives() const {
        std::lock_guard lock(mutex_);
        return waiting_.size();
    }

    // How often a waiting receive or collect woke up, for the tests that check a message wakes
    // only its receiver: one wake-up per message delivered to a waiting thread, plus the rare
    // spurious one.
    std::size_t wakeups() const {
        std::lock_guard lock(mutex_);
        return wakeups_;
    }

private:
    using Key = std::tuple<int, Direction, int, int>;
    struct Parcel {
        torch::Tensor tensor;
        std::shared_ptr<c10::Event> ready;  // GPU only: recorded on the sender's stream
    };
    // One key's message and its receiver's condition variable. Made by whichever of the post and
    // the take comes first; erased by the take, unless another take still waits on it (a plan
    // that receives one key twice; the validator refuses such plans, this keeps them safe).
    struct Mailbox {
        Parcel parcel;
        bool full = false;
        int waiters = 0;
        std::condition_variable wake;
    };
    struct Group {
        std::vector<ParamMap> members;  // every replica's parameters, in arrival order
        int arrived = 0;
        int done = 0;
        int waiters = 0;
        std::condition_variable wake;
    };

    // Waits on `wake` until `ready` or the timeout, counting the wake-ups (wakeups()).
    template <class Ready>
    bool waitFor(std::condition_variable& wake, std::unique_lock<std::mutex>& lock, Ready ready) {
        std::size_t checks = 0;
        const bool done = wake.wait_for(lock, timeout_, [&] {
            ++checks;
            return ready();
        });
        wakeups_ += checks - 1;  // the first check is before any wait
        return done;
    }

    // Each gradient summed into the first replica's that has it, then copied to the others;
    // a replica without one (no backward reached it) gets its own copy of the sum.
    static void sumInPlace(Group& group) {
        torch::NoGradGuard noGrad;
        for (const auto& [name, unused] : group.members.front()) {
            std::vector<torch::Tensor> params;
            for (const auto& member : group.members)
                if (auto it = member.find(name); it != member.end()) params.push_back(it->second);
            torch::Tensor sum;
            for (const auto& p : params) {
                if (!p.grad().defined()) continue;
                if (sum.defined()) sum.add_(p.grad());
                else sum = p.grad();  // the first replica's own gradient holds the sum
            }
            if (!sum.defined()) continue;
            for (auto& p : params) {
                if (!p.grad().defined()) p.mutable_grad() = sum.clone();
                else if (!p.grad().is_same(sum)) p.mutable_grad().copy_(sum);
            }
        }
        // Written on this thread's stream: done before any replica's OPT reads it.
        if (!group.members.front().empty()) finishCurrentStream(group.members.front().begin()->second);
    }

    // The first kListedWaiters of them and how many more: a 4,096-device run's list of every
    // blocked device made a 112 kB line.
    std::string blockedList() const {
        if (waiting_.empty()) return "";
        std::string list = "; also blocked: ";
        std::size_t listed = 0;
        for (const auto& w : waiting_) {
            if (listed == kListedWaiters) break;
            list += (listed++ ? ", " : "") + w;
        }
        if (waiting_.size() > listed) list += " and " + std::to_string(waiting_.size() - listed) + " more";
        return list;
    }

    std::string seconds() const {
        std::string s = std::to_string(timeout_.count());
        s.erase(s.find_last_not_of('0') + 1);
        if (!s.empty() && s.back() == '.') s.pop_back();
        return s;
    }

    static constexpr std::size_t kListedWaiters = 16;

    std::chrono::duration<double> timeout_;
    mutable std::mutex mutex_;
    std::map<Key, Mailbox> mail_;
    std::map<std::string, Group> groups_;
    std::set<std::string> waiting_;
    bool aborted_ = false;
    std::optional<std::string> failure_;
    std::size_t wakeups_ = 0;
};

}  // namespace mario::exec
