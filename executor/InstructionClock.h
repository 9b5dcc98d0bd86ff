#pragma once
// When a worker's instructions ran, on the clock of the device they ran on (issue 5's live
// profiling: "CUDA events on GPU, a steady clock on CPU").
//
// On the CPU an instruction has finished when the interpreter returns from it, so a mark is
// the steady clock's reading. On a GPU the interpreter only queues kernels: the instruction
// runs later, while the host is already queueing the next ones. Waiting for the stream after
// every instruction would measure the right thing but destroy the launch-ahead it measures, so
// a mark is a CUDA timing event recorded on the worker's current stream, read only once the
// GPU has passed it. One anchor event, recorded on an idle stream when the clock starts, puts
// the GPU's times on the host's timeline (microseconds since the run's origin), so GPU and CPU
// workers of one run share one time axis.
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>

#include <c10/core/Device.h>

namespace mario::exec {

class InstructionClock {
public:
    using Mark = std::size_t;

    // Starts the clock on the calling thread's current stream of `device`. Construct it on the
    // thread that will take the marks (its stream is the one the instructions run on).
    InstructionClock(const c10::Device& device, std::chrono::steady_clock::time_point origin);
    ~InstructionClock();
    InstructionClock(const InstructionClock&) = delete;
    InstructionClock& operator=(const InstructionClock&) = delete;

    // A point in the stream of work: now (CPU), or when the GPU reaches everything queued so
    // far on the current stream.
    Mark mark();
    // Whether the time of `mark` is known yet (always on the CPU). Never blocks.
    bool reached(Mark mark) const;
    // Microseconds from the origin to `mark`; waits until the GPU has reached it.
    double microseconds(Mark mark);
    // Forgets every mark up to and including `mark` (their events go back to the driver).
    void release(Mark mark);

private:
    struct GpuMarks;  // CUDA events; only in builds whose LibTorch has CUDA
    std::chrono::steady_clock::time_point origin_;
    std::unique_ptr<GpuMarks> gpu_;
    Mark first_ = 0;                 // the oldest mark still held
    std::deque<double> hostMicros_;  // CPU marks, index − first_
};

}  // namespace mario::exec
