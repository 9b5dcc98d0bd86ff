#pragma once
// The Transport of one worker thread over the process's shared Exchange: its replica picks
// the mailboxes, so data-parallel replicas running as threads of one process never see each
// other's activations, while REDUCE_GRAD groups span all of them.
#include "executor/Exchange.h"
#include "executor/Transport.h"

namespace mario::exec {

class InProcessTransport final : public Transport {
public:
    InProcessTransport(Exchange& exchange, int replica) : exchange_(exchange), replica_(replica) {}

    void send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) override {
        exchange_.post(replica_, direction, stage, microbatch, tensor);
    }
    torch::Tensor receive(Direction direction, int stage, int microbatch, const std::string& waiter) override {
        return exchange_.take(replica_, direction, stage, microbatch, waiter);
    }
    void contribute(const ReduceGroup& group, const ParamMap& params) override {
        exchange_.contribute(group.key, group.participants, params);
    }
    void collect(const ReduceGroup& group, ParamMap& /*params: summed in place by contribute*/) override {
        exchange_.collect(group.key, group.participants);
    }
    void fail(const std::string& message) override { exchange_.fail(message); }
    // The exchange's: any worker thread of the run may have failed it.
    std::optional<std::string> failure() const override { return exchange_.failure(); }

private:
    Exchange& exchange_;
    int replica_;
};

}  // namespace mario::exec
