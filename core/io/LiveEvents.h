#pragma once
// The live-event protocol between `mario-executor run --events` and whoever watches the run
// (the workbench's LiveRun): one JSON object per stdout line. Its single owner: the executor
// writes every line through the writers below and readers parse them with parseLiveEvent, so
// the two sides cannot drift apart field by field.
//
// A run prints, in this order:
//   hello        once, first: the protocol version, backend, model, devices, instructions
//   instruction  per instruction and iteration, once its device has finished it (start/end in
//                microseconds on the run's one clock)
//   iteration    per iteration, once the whole step has finished (time, loss, peaks)
//   summary      the last line, also without --events; it has no "event" key, because scripts
//                read it as the run's result and it predates the protocol
// A reader that meets "event": "error" reports its message (a way for a run to fail in-band).
//
// Lines of another protocol version start with a hello carrying that version: parse the hello,
// then checkLiveProtocol, before trusting any later line.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/util/Result.h"

namespace mario {

// Bumped whenever a field changes meaning or a reader would misread a line of the other version.
inline constexpr int kLiveEventProtocol = 1;

struct LiveHello {
    int protocol = kLiveEventProtocol;
    std::string backend;  // "cpu" or "cuda"
    std::string model;    // the executor's model spec, as it describes it
    int devices = 0;      // pipeline devices of the plan
    std::size_t instructions = 0;
};

// One instruction of one device in one iteration. Times are on one clock for every device of
// the run (steady clock on the CPU, CUDA events placed on it on a GPU).
struct LiveInstruction {
    int iteration = 0;
    int device = 0;
    int replica = 0;
    std::size_t index = 0;        // position in the device's program
    std::string instruction;      // its action string ("1F0", ...)
    double activation_bytes = 0;  // the plan's activation bytes the worker held after it
    // The GPU allocator's reading after it; absent on the CPU, which has none.
    std::optional<double> allocated_bytes;
    std::optional<double> peak_allocated_bytes;
    double start_us = 0;
    double end_us = 0;
};

struct LiveIteration {
    int iteration = 0;
    double loss = 0;  // NaN when the run diverged (written as null)
    double step_ms = 0;
    std::vector<double> peak_activation_bytes;  // per pipeline device
};

// The gradient check against the single-device reference (run --reference).
struct LiveReferenceCheck {
    double loss = 0;
    double max_grad_rel_diff = 0;
    double max_grad_abs_diff = 0;
    bool grads_match = true;
};

// The run's result, the last stdout line.
struct LiveSummary {
    double loss = 0;
    std::size_t instructions = 0;
    int devices = 0;
    int data_parallel = 1;
    int world = 1;
    std::vector<double> step_ms;               // absent from the line when empty
    std::vector<double> peak_allocated_bytes;  // absent from the line when empty (CPU)
    std::optional<LiveReferenceCheck> reference;
};

struct LiveError {
    std::string message;
};

using LiveEvent = std::variant<LiveHello, LiveInstruction, LiveIteration, LiveSummary, LiveError>;

// Writers: one JSON line each, without the trailing newline.
std::string writeLiveEvent(const LiveHello& hello);
std::string writeLiveEvent(const LiveInstruction& instruction);
std::string writeLiveEvent(const LiveIteration& iteration);
std::string writeLiveEvent(const LiveSummary& summary);
std::string writeLiveEvent(const LiveError& error);

// One line (surrounding whitespace ignored). Errors name what is wrong: text that is not a JSON
// object, an unknown event name, or the field ("iteration.step_ms: required"). Keys a line has
// beyond its event's fields are ignored, so a newer writer may add some within one protocol.
// A hello of another protocol version parses with only `protocol` read (the rest of another
// version's hello is not this build's to interpret): see checkLiveProtocol.
Result<LiveEvent> parseLiveEvent(std::string_view line);

// Whether a hello speaks this build's protocol; the error names both versions.
Result<bool> checkLiveProtocol(const LiveHello& hello);

}  // namespace mario
