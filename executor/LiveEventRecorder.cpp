#include "executor/LiveEventRecorder.h"

#include <stdexcept>
#include <utility>

namespace mario::exec {

LiveEventRecorder::LiveEventRecorder(Sink sink, std::chrono::steady_clock::time_point origin)
    : sink_(std::move(sink)), origin_(origin) {}

LiveEventRecorder::~LiveEventRecorder() = default;

void LiveEventRecorder::start(const c10::Device& device) {
    clock_ = std::make_unique<InstructionClock>(device, origin_);
    pending_.clear();
}

InstructionClock::Mark LiveEventRecorder::begin() {
    if (!clock_) throw std::logic_error("LiveEventRecorder::begin before start");
    return clock_->mark();
}

void LiveEventRecorder::end(InstructionClock::Mark start, LiveInstruction event) {
    pending_.push_back({start, clock_->mark(), std::move(event)});
    publish(false);
}

void LiveEventRecorder::flush() {
    if (clock_) publish(true);
}

void LiveEventRecorder::publish(bool wait) {
    // In program order: an instruction is published once the device has passed its end.
    while (!pending_.empty() && (wait || clock_->reached(pending_.front().end))) {
        Pending& front = pending_.front();
        front.event.start_us = clock_->microseconds(front.start);
        front.event.end_us = clock_->microseconds(front.end);
        sink_(writeLiveEvent(front.event));
        clock_->release(front.end);
        pending_.pop_front();
    }
}

}  // namespace mario::exec
