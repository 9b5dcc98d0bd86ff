#pragma once
// Cross-stream hand-over for device threads that share one GPU (single-GPU mode: one CUDA
// stream per pipeline device). A tensor made on one thread's stream is only safe to read on
// another's after an event, and the caching allocator must learn that the other stream uses
// it, or it may recycle the memory while the reader's kernels are still queued. On CPU every
// function here is a no-op. Only c10's device-generic API is used, so this compiles and links
// against a CPU-only LibTorch too.
#include <memory>

#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/torch.h>

namespace mario::exec {

inline c10::Stream currentStream(const torch::Device& device) {
    return c10::impl::getDeviceGuardImpl(device.type())->getStream(device);
}

// An event recorded on the producing thread's stream right after `tensor` was written.
inline std::shared_ptr<c10::Event> markReady(const torch::Tensor& tensor) {
    if (!tensor.defined() || tensor.device().is_cpu()) return nullptr;
    auto event = std::make_shared<c10::Event>(tensor.device().type());
    event->record(currentStream(tensor.device()));
    return event;
}

// Makes the consuming thread's stream wait for the producer, and keeps the memory alive for it.
inline void awaitReady(const std::shared_ptr<c10::Event>& ready, const torch::Tensor& tensor) {
    if (!ready || !tensor.defined() || tensor.device().is_cpu()) return;
    const c10::Stream stream = currentStream(tensor.device());
    ready->block(stream);
    tensor.record_stream(stream);
}

// Blocks the calling thread until its stream has finished (used around REDUCE_GRAD sums, which
// read other threads' gradients).
inline void finishCurrentStream(const torch::Device& device) {
    if (device.is_cpu()) return;
    c10::impl::getDeviceGuardImpl(device.type())->synchronizeStream(currentStream(device));
}

inline void finishCurrentStream(const torch::Tensor& tensor) {
    if (tensor.defined()) finishCurrentStream(tensor.device());
}

}  // namespace mario::exec
