#pragma once
// The data dependencies between devices of a simulated plan: every SEND paired with the RECV
// that takes its message, the compute that produced the data (the F for an activation, the B
// or I for a gradient, on the sender's device) and the compute that consumes it (the same
// stage's F, B or I on the receiver's device), with the simulated times of each. The window
// draws them as arrows when a box is hovered, and the critical path crosses devices through
// them (core/sim/CriticalPath.h).
//
// Matching follows the virtual pipeline (PipelineTopology::sendTarget) and the message
// addressing the simulator uses (MessageSlots), so an arrow exists exactly where the
// simulator delivered a message.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

// One instruction of a plan: its device (index into Plan::devices) and its program index.
struct InstructionRef {
    int device = -1;
    int program_index = -1;
    bool valid() const { return device >= 0 && program_index >= 0; }
    friend bool operator==(const InstructionRef&, const InstructionRef&) = default;
    friend auto operator<=>(const InstructionRef&, const InstructionRef&) = default;
};

struct Message {
    bool backward = false;  // a gradient (SEND_B → RECV_B), else an activation
    int stage = 0;          // the receiving stage
    int microbatch = 0;
    InstructionRef producer;  // F, B or I whose output is sent; invalid when the program has none
    InstructionRef send;
    InstructionRef recv;      // invalid when no device receives it (a plan under edit)
    InstructionRef consumer;  // F, B or I that reads it; invalid when none
    double sent_ms = 0;       // the SEND's issue time
    double arrived_ms = 0;    // sent + latency + bytes / bandwidth
    double reached_ms = 0;    // when the receiver's program reached the RECV
    double received_ms = 0;   // the RECV's end: max(arrived, reached)
    double consumed_ms = 0;   // the consumer's start
    // How long the receiver waited for it: received − reached (0 when it arrived first).
    double waitedMs() const;
};

class MessageGraph {
public:
    MessageGraph() = default;
    // Fails when `result` does not hold a timing for every instruction of `plan` (another
    // plan's result) or the plan's chains are broken. A deadlocked result builds, with the
    // times of never-run instructions as the simulator left them (0).
    static Result<MessageGraph> build(const Plan& plan, const SimResult& result);

    const std::vector<Message>& messages() const { return messages_; }
    // The messages an instruction waits for: for a compute, those its RECVs took; for a
    // RECV, its own. O(log n).
    std::vector<const Message*> incoming(const InstructionRef& at) const;
    // The messages an instruction's output leaves in: for a compute, those its SENDs carry;
    // for a SEND, its own. O(log n).
    std::vector<const Message*> outgoing(const InstructionRef& at) const;
    // The message a RECV took, or nullptr (also for any other instruction).
    const Message* receivedBy(const InstructionRef& recv) const;

private:
    std::vector<const Message*> lookUp(const std::vector<std::pair<InstructionRef, int>>& index,
                                       const InstructionRef& at) const;

    std::vector<Message> messages_;
    // (instruction, message index), sorted: producer and SEND in outgoing, consumer and RECV
    // in incoming. Sorted vectors, not a map per instruction, so a 100k-box timeline stays small.
    std::vector<std::pair<InstructionRef, int>> incoming_, outgoing_;
};

}  // namespace mario
