#include "DeviceWorker.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace mario::exec {

using Direction = Exchange::Direction;

namespace {
std::string reduceKey(const StageRuntime& st) { return st.slice.key(); }
}  // namespace

DeviceWorker::DeviceWorker(int device, const Plan& plan, const PipelineTopology& topology, const GptModel& model,
                           std::map<int, StageRuntime*> stages, const Batch& batch, Exchange& exchange, double lr,
                           bool adam, int step)
    : device_(device), plan_(plan), topology_(topology), model_(model), stages_(std::move(stages)), batch_(batch),
      exchange_(exchange), lr_(lr), adam_(adam), step_(step), microbatches_(static_cast<int>(batch.inputs.size())) {
    // An F is checkpointed when an R of the same (stage, mb) stands later in the program.
    std::set<std::pair<int, int>> recomputeLater;
    const auto& program = plan_.devices[device_].program;
    for (auto it = program.rbegin(); it != program.rend(); ++it) {
        const std::pair key{it->stage, it->microbatch};
        if (it->op == Op::Recompute) recomputeLater.insert(key);
        else if (it->op == Op::Forward && recomputeLater.count(key)) checkpointed_.insert(key);
    }
}

StageRuntime& DeviceWorker::stage(int index) {
    auto it = stages_.find(index);
    if (it == stages_.end())
        throw std::runtime_error("stage " + std::to_string(index) + " does not run on this device");
    return *it->second;
}

void DeviceWorker::run() {
    // One intra-op thread per device thread: the devices are the parallelism.
    at::set_num_threads(1);
    const auto& program = plan_.devices[device_].program;
    for (std::size_t i = 0; i < program.size(); ++i) {
        try {
            current_ = "device " + std::to_string(device_) + " at " + toActionString(program[i]);
            const auto start = std::chrono::steady_clock::now();
            execute(program[i], i);
            measureMemory();
            if (sink_) {
                const auto end = std::chrono::steady_clock::now();
                auto us = [&](auto t) { return std::chrono::duration<double, std::micro>(t - origin_).count(); };
                sink_(nlohmann::json{{"event", "instruction"},
                                     {"iteration", step_},
                                     {"device", device_},
                                     {"index", i},
                                     {"instruction", toActionString(program[i])},
                                     {"start_us", us(start)},
                                     {"end_us", us(end)},
                                     {"activation_bytes", peakBytesNow_}}
                          .dump());
            }
        } catch (const RunAborted&) {
            return;
        } catch (const std::exception& e) {
            exchange_.fail("device " + std::to_string(device_) + ", instruction " + toActionString(program[i]) +
                           " (program[" + std::to_string(i) + "]): " + e.what());
            return;
        }
    }
    // A REDUCE_GRAD without a later OPT still leaves the summed gradients behind.
    try {
        for (auto& [index, st] : stages_) collectReduce(*st);
    } catch (const RunAborted&) {
    } catch (const std::exception& e) {
        exchange_.fail("device " + std::to_string(device_) + ", end of program: " + e.what());
    }
}

void DeviceWorker::forward(int s, int m, bool keepGraph) {
    StageRuntime& st = stage(s);
    Slot& slot = slots_[{s, m}];
    if (m < 0 || m >= microbatches_) throw std::runtime_error("micro-batch out of range");
    if (!slot.input.defined()) {
        if (topology_.previousStage(s) < 0) slot.input = batch_.inputs[m];
        // Previous stage on this device: handed over in memory by its F, no RECV in the plan.
        else slot.input = exchange_.take(Direction::Forward, s, m, current_).detach().requires_grad_(true);
    }
    torch::Tensor out;
    {
        std::optional<torch::NoGradGuard> noGrad;
        if (!keepGraph) noGrad.emplace();  // checkpointed: only the input is kept
        out = model_.forward(st.slice, st.params, slot.input, batch_.targets[m]);
    }
    if (topology_.nextStage(s) < 0) out = out / static_cast<double>(microbatches_);
    slot.output = out;
    slot.forwarded = true;
}

void DeviceWorker::backward(int s, int m) {
    Slot& slot = slots_[{s, m}];
    if (!slot.output.defined() || !slot.output.requires_grad())
        throw std::runtime_error("no forward graph to back-propagate (F missing, or checkpointed without R)");
    if (topology_.nextStage(s) < 0) {
        slot.output.backward();
    } else {
        if (!slot.outGrad.defined()) slot.outGrad = exchange_.take(Direction::Backward, s, m, current_);
        slot.output.backward(slot.outGrad);
    }
    const int prev = topology_.previousStage(s);
    if (prev >= 0) {
        slot.inGrad = slot.input.grad().detach();
        if (sameDevice(prev)) exchange_.post(Direction::Backward, prev, m, slot.inGrad);
    }
    // B frees the activations; only the input gradient waits for its SEND_B.
    slot.input = torch::Tensor();
    slot.output = torch::Tensor();
    slot.outGrad = torch::Tensor();
    slot.forwarded = false;
}

void DeviceWorker::measureMemory() {
    double bytes = 0;
    for (const auto& [key, slot] : slots_) {
        if (!slot.forwarded) continue;
        const auto& cost = plan_.stages[key.first].cost;
        if (slot.output.defined() && slot.output.requires_grad()) bytes += cost.activation_bytes;
        else if (slot.input.defined()) bytes += cost.checkpoint_bytes;
    }
    peakBytesNow_ = bytes;
    peakBytes_ = std::max(peakBytes_, bytes);
}

void DeviceWorker::execute(const Instruction& in, std::size_t) {
    const int s = in.stage, m = in.microbatch;
    switch (in.op) {
    case Op::Forward: {
        const bool ckpt = checkpointed_.count({s, m}) > 0;
        forward(s, m, !ckpt);
        const int next = topology_.nextStage(s);
        if (sameDevice(next)) exchange_.post(Direction::Forward, next, m, slots_[{s, m}].output.detach());
        if (topology_.nextStage(s) < 0) lossSum_ += slots_[{s, m}].output.item<double>();
        return;
    }
    case Op::Recompute: {
        Slot& slot = slots_[{s, m}];
        if (!slot.input.defined()) throw std::runtime_error("R without a checkpointed F before it");
        forward(s, m, true);
        return;
    }
    case Op::Backward:
    case Op::BackwardInput:  // first slice: I does the full backward, W is then a no-op
        backward(s, m);
        return;
    case Op::BackwardWeight:
        return;
    case Op::SendForward: {
        const int next = topology_.nextStage(s);
        if (next < 0 || sameDevice(next)) return;  // nothing to move across devices
        Slot& slot = slots_[{s, m}];
        if (!slot.output.defined()) throw std::runtime_error("SEND_F before its F");
        exchange_.post(Direction::Forward, next, m, slot.output.detach());
        if (!slot.output.requires_grad()) slot.output = torch::Tensor();  // checkpointed: R rebuilds it
        return;
    }
    case Op::RecvForward:
        stage(s);
        slots_[{s, m}].input = exchange_.take(Direction::Forward, s, m, current_).detach().requires_grad_(true);
        return;
    case Op::SendBackward: {
        const int prev = topology_.previousStage(s);
        if (prev < 0 || sameDevice(prev)) return;
        Slot& slot = slots_[{s, m}];
        if (!slot.inGrad.defined()) throw std::runtime_error("SEND_B before its B");
        exchange_.post(Direction::Backward, prev, m, slot.inGrad);
        slots_.erase({s, m});
        return;
    }
    case Op::RecvBackward:
        stage(s);
        slots_[{s, m}].outGrad = exchange_.take(Direction::Backward, s, m, current_);
        return;
    case Op::ReduceGrad: {
        StageRuntime& st = stage(s);
        if (st.replicas > 1) {
            exchange_.contribute(reduceKey(st), st.params);
            st.reducePending = true;
        } else {
            st.reduced = true;  // dp = 1 and no replica: nothing to sum
        }
        return;
    }
    case Op::Optimizer: {
        StageRuntime& st = stage(s);
        collectReduce(st);
        optimizerStep(st, lr_, adam_);
        return;
    }
    }
}

void DeviceWorker::collectReduce(StageRuntime& st) {
    if (!st.reducePending) return;
    exchange_.collect(reduceKey(st), st.replicas, st.params);
    st.reducePending = false;
    st.reduced = true;
}

void DeviceWorker::optimizerStep(StageRuntime& st, double lr, bool adam) {
    torch::NoGradGuard noGrad;
    st.gradSnapshot.clear();
    if (adam) ++st.adamSteps;
    for (auto& [name, p] : st.params) {
        if (!p.grad().defined()) continue;
        const torch::Tensor g = p.grad().clone();
        st.gradSnapshot[name] = g;
        if (adam) {
            constexpr double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
            auto& m = st.adamM[name];
            auto& v = st.adamV[name];
            if (!m.defined()) m = torch::zeros_like(g), v = torch::zeros_like(g);
            m.mul_(beta1).add_(g, 1 - beta1);
            v.mul_(beta2).addcmul_(g, g, 1 - beta2);
            const double c1 = 1 - std::pow(beta1, st.adamSteps), c2 = 1 - std::pow(beta2, st.adamSteps);
            p.sub_((m / c1) / ((v / c2).sqrt() + eps) * lr);
        } else {
            p.sub_(g * lr);
        }
        p.mutable_grad().zero_();
    }
    st.stepped = true;
}

}  // namespace mario::exec
