#pragma once
// The live instruction events of one worker (issue 5's live profiling): when each instruction
// of its program ran, written as core/io/LiveEvents lines. On a GPU the interpreter only queues
// an instruction's kernels, so its line waits until the GPU has passed its end (InstructionClock)
// and lines trail the host a little; they still go out in program order. Torch-free header.
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "core/io/LiveEvents.h"
#include "executor/InstructionClock.h"

namespace mario::exec {

class LiveEventRecorder {
public:
    using Sink = std::function<void(const std::string&)>;

    // `sink` is already thread-safe; times are microseconds since `origin`, the run's one clock.
    LiveEventRecorder(Sink sink, std::chrono::steady_clock::time_point origin);
    ~LiveEventRecorder();
    LiveEventRecorder(const LiveEventRecorder&) = delete;
    LiveEventRecorder& operator=(const LiveEventRecorder&) = delete;

    // Starts the clock on the calling thread's current stream of `device`: call it on the
    // worker's thread before the first instruction, since its marks go on that stream.
    void start(const c10::Device& device);
    // Where an instruction starts, taken just before the interpreter runs it.
    InstructionClock::Mark begin();
    // After the instruction begun at `start`: queues `event` (every field but the times) and
    // sends every queued line whose times are known.
    void end(InstructionClock::Mark start, LiveInstruction event);
    // The end of the program: sends every line still queued, waiting for the GPU to pass them.
    void flush();

private:
    struct Pending {
        InstructionClock::Mark start, end;
        LiveInstruction event;
    };
    void publish(bool wait);

    Sink sink_;
    std::chrono::steady_clock::time_point origin_;
    std::unique_ptr<InstructionClock> clock_;
    std::deque<Pending> pending_;
};

}  // namespace mario::exec
