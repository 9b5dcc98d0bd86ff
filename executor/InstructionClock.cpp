#include "executor/InstructionClock.h"

#include <deque>
#include <stdexcept>

#ifdef MARIO_TORCH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace mario::exec {

namespace {
double microsSince(std::chrono::steady_clock::time_point origin) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin).count();
}
}  // namespace

#ifdef MARIO_TORCH_CUDA
struct InstructionClock::GpuMarks {
    c10::DeviceIndex device = 0;
    at::cuda::CUDAEvent anchor{cudaEventDefault};  // timing enabled (the default disables it)
    double anchorMicros = 0;                       // host time at which the GPU passed the anchor
    std::deque<at::cuda::CUDAEvent> events;        // mark first_ + i is events[i]
};
#else
struct InstructionClock::GpuMarks {};  // without CUDA every clock is a host clock
#endif

InstructionClock::InstructionClock([[maybe_unused]] const c10::Device& device,
                                   std::chrono::steady_clock::time_point origin)
    : origin_(origin) {
#ifdef MARIO_TORCH_CUDA
    if (device.is_cuda()) {
        gpu_ = std::make_unique<GpuMarks>();
        gpu_->device = device.index();
        // On a drained stream the anchor is passed the moment it is recorded, so the host time
        // read right after waiting for it is its time, to within the wait's wake-up latency.
        auto stream = c10::cuda::getCurrentCUDAStream(gpu_->device);
        stream.synchronize();
        gpu_->anchor.record(stream);
        gpu_->anchor.synchronize();
        gpu_->anchorMicros = microsSince(origin_);
    }
#endif
}

InstructionClock::~InstructionClock() = default;

InstructionClock::Mark InstructionClock::mark() {
#ifdef MARIO_TORCH_CUDA
    if (gpu_) {
        gpu_->events.emplace_back(cudaEventDefault);
        gpu_->events.back().record(c10::cuda::getCurrentCUDAStream(gpu_->device));
        return first_ + gpu_->events.size() - 1;
    }
#endif
    hostMicros_.push_back(microsSince(origin_));
    return first_ + hostMicros_.size() - 1;
}

bool InstructionClock::reached([[maybe_unused]] Mark mark) const {
    if (mark < first_) throw std::logic_error("InstructionClock: mark already released");
#ifdef MARIO_TORCH_CUDA
    if (gpu_) return gpu_->events.at(mark - first_).query();
#endif
    return true;
}

double InstructionClock::microseconds(Mark mark) {
    if (mark < first_) throw std::logic_error("InstructionClock: mark already released");
#ifdef MARIO_TORCH_CUDA
    if (gpu_) {
        const auto& event = gpu_->events.at(mark - first_);
        event.synchronize();
        return gpu_->anchorMicros + 1000.0 * gpu_->anchor.elapsed_time(event);
    }
#endif
    return hostMicros_.at(mark - first_);
}

void InstructionClock::release(Mark mark) {
    for (; first_ <= mark; ++first_) {
#ifdef MARIO_TORCH_CUDA
        if (gpu_) {
            if (gpu_->events.empty()) return;
            gpu_->events.pop_front();
            continue;
        }
#endif
        if (hostMicros_.empty()) return;
        hostMicros_.pop_front();
    }
}

}  // namespace mario::exec
