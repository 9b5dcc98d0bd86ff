#include "executor/DeviceWorker.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "executor/AllocationTracker.h"
#include "executor/DeviceStreams.h"

namespace mario::exec {

DeviceWorker::DeviceWorker(const WorkerPlace& place, const Plan& plan, const PipelineTopology& topology,
                           const GptModel& model, std::map<int, StageRuntime*> stages, const Batch& batch,
                           Transport& transport)
    : place_(place), device_(place.device), plan_(plan), topology_(topology), model_(model), stages_(std::move(stages)),
      batch_(batch), transport_(transport), microbatches_(plan.microbatchCount()),
      torchDevice_(batch.inputs.empty() ? torch::Device(torch::kCPU) : batch.inputs.front().device()),
      optimizer_(place.lr, place.adam, place.snapshot) {
    // An F is checkpointed when an R of the same (stage, mb) stands later in the program.
    std::set<std::pair<int, int>> recomputeLater;
    const auto& program = plan_.devices[device_].program;
    for (auto it = program.rbegin(); it != program.rend(); ++it) {
        const std::pair key{it->stage, it->microbatch};
        if (it->op == Op::Recompute) recomputeLater.insert(key);
        else if (it->op == Op::Forward && recomputeLater.count(key)) checkpointed_.insert(key);
    }
}

std::string DeviceWorker::where() const {
    std::string text = "device " + std::to_string(device_);
    if (place_.replicas > 1) text += " of replica " + std::to_string(place_.replica);
    return text;
}

void DeviceWorker::handOver(Direction direction, int s, int m, torch::Tensor tensor) {
    handovers_[{direction, s, m}] = std::move(tensor);
}

torch::Tensor DeviceWorker::takeOver(Direction direction, int s, int m) {
    auto it = handovers_.find({direction, s, m});
    if (it == handovers_.end())
        throw std::runtime_error(std::string(direction == Direction::Forward ? "the forward of the previous stage"
                                                                             : "the backward of the next stage") +
                                 " on this device has not run yet (stage " + std::to_string(s) + ", micro-batch " +
                                 std::to_string(m) + ")");
    torch::Tensor tensor = std::move(it->second);
    handovers_.erase(it);
    return tensor;
}

torch::Tensor DeviceWorker::incoming(Direction direction, int s, int m, bool fromThisDevice) {
    // A plan may leave out the RECV of a cross-device transfer; the data is then taken at use.
    return fromThisDevice ? takeOver(direction, s, m) : transport_.receive(direction, s, m, current_);
}

StageRuntime& DeviceWorker::stage(int index) {
    auto it = stages_.find(index);
    if (it == stages_.end())
        throw std::runtime_error("stage " + std::to_string(index) + " does not run on this device");
    return *it->second;
}

std::optional<DeviceMemoryReading> DeviceWorker::readMemory() const {
    if (book_) return DeviceMemoryReading{book_->current(account_), book_->peak(account_)};
    return readDeviceMemory(torchDevice_);
}

void DeviceWorker::run() {
    // One intra-op thread per device thread: the devices are the parallelism.
    at::set_num_threads(1);
    // Before any kernel: a new thread has no current CUDA context (DeviceStreams.h).
    try {
        enterDevice(torchDevice_);
    } catch (const std::exception& e) {
        transport_.fail(where() + ": cannot make " + torchDevice_.str() + " current: " + e.what());
        return;
    }
    // This thread's allocations go to its own account, for as long as it runs its program.
    std::optional<TrackAllocations> tracking;
    if (book_) tracking.emplace(chargeTo(book_, account_, torchDevice_.type()));
    // Started here, on the worker's thread, so that its marks go on this thread's stream.
    if (recorder_) recorder_->start(torchDevice_);
    const auto& program = plan_.devices[device_].program;
    for (std::size_t i = 0; i < program.size(); ++i) {
        try {
            current_ = where() + " at " + toActionString(program[i]);
            const auto start = recorder_ ? recorder_->begin() : InstructionClock::Mark{};
            execute(program[i], i);
            measureMemory();
            const auto memory = readMemory();
            if (memory) peakAllocated_ = std::max(peakAllocated_, memory->peak_bytes);
            if (recorder_) {
                LiveInstruction event;
                event.iteration = place_.step;
                event.device = device_;
                event.replica = place_.replica;
                event.index = i;
                event.instruction = toActionString(program[i]);
                event.activation_bytes = peakBytesNow_;
                if (memory) {
                    event.allocated_bytes = memory->allocated_bytes;
                    event.peak_allocated_bytes = memory->peak_bytes;
                }
                recorder_->end(start, std::move(event));
            }
        } catch (const RunAborted&) {
            return;
        } catch (const std::exception& e) {
            transport_.fail(where() + ", instruction " + toActionString(program[i]) + " (program[" + std::to_string(i) +
                            "]): " + e.what());
            return;
        }
    }
    // The end of the program closes the step for what the plan left open (no REDUCE_GRAD, no
    // OPT: a hand-written plan, or one planned for dp = 1 run with replicas), so every iteration
    // ends with summed gradients and one optimizer step. All contributions go out before any
    // collect, so workers finishing in any order cannot wait on each other in a cycle.
    try {
        for (auto& [index, st] : stages_)
            if (!st->stepped) contributeUnlessReduced(*st);
        for (auto& [index, st] : stages_) {
            collectReduce(*st);
            if (!st->stepped) optimizer_.step(*st);
        }
    } catch (const RunAborted&) {
        return;
    } catch (const std::exception& e) {
        transport_.fail(where() + ", end of program: " + e.what());
        return;
    }
    if (recorder_) recorder_->flush();
    // The account's true peak, transients inside an instruction included.
    if (book_) peakAllocated_ = book_->peak(account_);
}

void DeviceWorker::forward(int s, int m, bool keepGraph) {
    StageRuntime& st = stage(s);
    Slot& slot = slots_[{s, m}];
    if (m < 0 || m >= microbatches_) throw std::runtime_error("micro-batch out of range");
    const std::size_t sample = static_cast<std::size_t>(place_.replica) * microbatches_ + m;
    if (!slot.input.defined()) {
        const int prev = topology_.previousStage(s);
        if (prev < 0) slot.input = batch_.inputs[sample];
        // Previous stage on this device: handed over in memory by its F, no RECV in the plan.
        else slot.input = incoming(Direction::Forward, s, m, sameDevice(prev)).detach().requires_grad_(true);
    }
    torch::Tensor out;
    {
        std::optional<torch::NoGradGuard> noGrad;
        if (!keepGraph) noGrad.emplace();  // checkpointed: only the input is kept
        out = model_.forward(st.slice, st.params, slot.input, batch_.targets[sample]);
    }
    if (topology_.nextStage(s) < 0) out = out / static_cast<double>(microbatches_ * place_.replicas);
    slot.output = out;
    slot.forwarded = true;
}

void DeviceWorker::backward(int s, int m) {
    Slot& slot = slots_[{s, m}];
    if (!slot.output.defined() || !slot.output.requires_grad())
        throw std::runtime_error("no forward graph to back-propagate (F missing, or checkpointed without R)");
    slot.output.backward(outputGradient(s, m, slot));
    const int prev = topology_.previousStage(s);
    if (prev >= 0) {
        slot.inGrad = slot.input.grad().detach();
        if (sameDevice(prev)) handOver(Direction::Backward, prev, m, slot.inGrad);
    }
    // B frees the activations; only the input gradient waits for its SEND_B.
    slot.input = torch::Tensor();
    slot.output = torch::Tensor();
    slot.outGrad = torch::Tensor();
    slot.forwarded = false;
}

torch::Tensor DeviceWorker::outputGradient(int s, int m, Slot& slot) {
    if (topology_.nextStage(s) < 0) return {};  // the loss: backward starts from it
    if (!slot.outGrad.defined()) slot.outGrad = incoming(Direction::Backward, s, m, sameDevice(topology_.nextStage(s)));
    return slot.outGrad;
}

// I: the gradient of the stage's input only, for the previous stage; the graph stays for W,
// which is what the weight-gradient bytes of the cost model stand for.
void DeviceWorker::backwardInput(int s, int m) {
    Slot& slot = slots_[{s, m}];
    if (!slot.output.defined() || !slot.output.requires_grad())
        throw std::runtime_error("no forward graph for the input gradient (F missing, or checkpointed without R)");
    const torch::Tensor gradient = outputGradient(s, m, slot);
    const int prev = topology_.previousStage(s);
    if (prev >= 0) {
        std::vector<torch::Tensor> outputGrads;
        if (gradient.defined()) outputGrads.push_back(gradient);
        slot.inGrad =
            torch::autograd::grad({slot.output}, {slot.input}, outputGrads, /*retain_graph=*/true)[0].detach();
        if (sameDevice(prev)) handOver(Direction::Backward, prev, m, slot.inGrad);
    }
    slot.weightsPending = true;
}

// W: the weight gradients from the graph I kept, accumulated into the parameters' grads.
void DeviceWorker::backwardWeight(int s, int m) {
    Slot& slot = slots_[{s, m}];
    if (!slot.weightsPending) throw std::runtime_error("W before its I");
    std::vector<torch::Tensor> weights;
    for (const auto& [name, param] : stage(s).params) weights.push_back(param);
    slot.output.backward(slot.outGrad, /*retain_graph=*/false, /*create_graph=*/false, at::TensorList(weights));
    slot.input = torch::Tensor();
    slot.output = torch::Tensor();
    slot.outGrad = torch::Tensor();
    slot.forwarded = false;
    slot.weightsPending = false;
    if (!slot.inGrad.defined()) slots_.erase({s, m});  // its SEND_B has gone, or it had none
}

void DeviceWorker::measureMemory() {
    double bytes = 0;
    for (const auto& [key, slot] : slots_) {
        if (!slot.forwarded) continue;
        const auto& cost = plan_.stages[key.first].cost;
        if (slot.weightsPending) bytes += cost.weightGradBytes();
        else if (slot.output.defined() && slot.output.requires_grad()) bytes += cost.activation_bytes;
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
            if (sameDevice(next)) handOver(Direction::Forward, next, m, slots_[{s, m}].output.detach());
            if (topology_.nextStage(s) < 0) lossSum_ += slots_[{s, m}].output.item<double>();
            return;
        }
        case Op::Recompute: {
            Slot& slot = slots_[{s, m}];
            if (!slot.input.defined()) throw std::runtime_error("R without a checkpointed F before it");
            forward(s, m, true);
            return;
        }
        case Op::Backward: backward(s, m); return;
        case Op::BackwardInput: backwardInput(s, m); return;
        case Op::BackwardWeight: backwardWeight(s, m); return;
        case Op::SendForward: {
            const int next = topology_.nextStage(s);
            if (next < 0 || sameDevice(next)) return;  // nothing to move across devices
            Slot& slot = slots_[{s, m}];
            if (!slot.output.defined()) throw std::runtime_error("SEND_F before its F");
            transport_.send(Direction::Forward, next, m, slot.output.detach());
            if (!slot.output.requires_grad()) slot.output = torch::Tensor();  // checkpointed: R rebuilds it
            return;
        }
        case Op::RecvForward:
            stage(s);
            slots_[{s, m}].input = transport_.receive(Direction::Forward, s, m, current_).detach().requires_grad_(true);
            return;
        case Op::SendBackward: {
            const int prev = topology_.previousStage(s);
            if (prev < 0 || sameDevice(prev)) return;
            Slot& slot = slots_[{s, m}];
            if (!slot.inGrad.defined()) throw std::runtime_error("SEND_B before its B");
            transport_.send(Direction::Backward, prev, m, slot.inGrad);
            if (slot.weightsPending) slot.inGrad = torch::Tensor();  // W still needs the graph
            else slots_.erase({s, m});
            return;
        }
        case Op::RecvBackward:
            stage(s);
            slots_[{s, m}].outGrad = transport_.receive(Direction::Backward, s, m, current_);
            return;
        case Op::ReduceGrad: {
            StageRuntime& st = stage(s);
            if (st.reduce.participants > 1) contributeUnlessReduced(st);
            else st.reduced = true;  // dp = 1 and no replica: nothing to sum
            return;
        }
        case Op::Optimizer: {
            StageRuntime& st = stage(s);
            // No REDUCE_GRAD before this OPT (a plan made for dp = 1 run with replicas): reduce here.
            // Only replicas of this very device share the group then, and they run the same program,
            // so they reach their OPTs in the same order and this cannot wait in a cycle.
            contributeUnlessReduced(st);
            collectReduce(st);
            optimizer_.step(st);
            return;
        }
    }
}

void DeviceWorker::contributeUnlessReduced(StageRuntime& st) {
    if (st.reduce.participants <= 1 || st.reducePending || st.reduced) return;
    transport_.contribute(st.reduce, st.params);
    st.reducePending = true;
}

void DeviceWorker::collectReduce(StageRuntime& st) {
    if (!st.reducePending) return;
    transport_.collect(st.reduce, st.params);
    st.reducePending = false;
    st.reduced = true;
}

}  // namespace mario::exec
