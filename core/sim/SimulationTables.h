#pragma once
// What every timing of one plan shares, made once per Simulator::run: the contention rounds
// re-time a plan many times, and rebuilding these tables each round made a round cost its
// stages × micro-batches however few instructions it re-timed (an 8-instruction plan padded
// with 1,024 unused stages took 113 s). A round now touches its instructions and devices only.
//
// Built after a census of the operands (issue 45), which sizes the tables and refuses a bad
// operand before any table is indexed; the Rs are marked before the loop (a forward reads its
// mark), and the summary's marks and sums come from the timing loop itself (TimingLoop.h), which
// loads every computation's stage row anyway. What the hot loop reads per stage (its durations,
// memory changes) sits in one small row per stage, and a message's slot base and transfer in one
// flat table indexed by stage and kind, instead of a StageCost lookup through the plan and a
// switch per instruction.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "core/sim/MessageSlots.h"
#include "core/util/Result.h"
#include "core/util/UninitialisedAllocator.h"

namespace mario {

class SimulationTables {
public:
    static constexpr int kOps = 11;  // Op's values
    // Per stage, what the simulator's loop needs of its cost, each computed exactly as the
    // StageCost expression it replaces. A power of two in size, so that the loop and the walk
    // find a stage's row with a shift instead of a multiplication by 304 (three instructions).
    // No default values: the table is made without writing its rows (UninitialisedAllocator) and
    // fillStages writes every field but the padding; zeroing the rows first (512 bytes each, in
    // `rep stos`) was three quarters of fillStages and 3% of an 8 × 32 simulation (issue 45).
    struct StageRow {
        std::array<double, kOps> duration;  // StageCost::durationOf
        // The dynamic memory a computation of each kind adds, as it starts (F, R) or as it ends
        // (B, I, W): a forward its activations (kept whole; checkpointed, checkpoint_bytes), a
        // recomputation the rest of them; a backward releases them, I and W each their part. 0
        // for the rest.
        std::array<double, kOps> memory_change;
        double checkpoint_bytes;  // a checkpointed forward's
        double send_transfer_ms;  // link.transferMs(send_bytes)
        double forward_flops;
        std::array<double, kOps> model_flops;  // what each kind adds to SummarySums::model_flops
        std::array<double, kOps> core_ms;      // and to core_ms without overlapped pairs: F, R, B, I's durations
        int next_stage, previous_stage;
        int chain;  // PipelineTopology::chainOf
        // Padding, not alignas: an over-aligned row made the table's allocation an aligned one,
        // which cost 8 × 32 more wall time than the shift saved.
        char padding[512 - 47 * sizeof(double) - 3 * sizeof(int)];
    };
    static_assert(sizeof(StageRow) == 512);
    // A message's state (messageStates below). Unsent is every byte 0xff: an all-ones double is a
    // NaN and an all-ones int is -1, so a table is made unsent by one memset (its fill, two
    // stores an element, was a tenth of the walk of an 8 × 32 simulation: issue 45).
    struct MessageState {
        double arrival;  // NaN: not sent
        int waiting;     // the device that waits for it, or -1
    };
    static_assert(std::is_trivially_copyable_v<MessageState> && std::numeric_limits<double>::is_iec559);
    // Per (stage, message kind) (SEND_F, RECV_F, SEND_B, RECV_B, in Op's order), at
    // kMessageKinds * stage + kind: the state of micro-batch 0's message that the instruction
    // sends to or receives from, in messageStates (the micro-batch is added; a send with no stage
    // to go to writes to a sink row no receive reads), and a send's transfer
    // (MessageSlots::transferMs: a gradient crosses the receiver's boundary). A message costs the
    // loop a look-up and an addition. Together, so that the loop keeps one pointer for both (it
    // ran out of registers); a pointer rather than a slot number, so that the loop keeps no
    // pointer to the table itself. Set once the table is (a move of the tables keeps them).
    static constexpr int kMessageKinds = 4;
    struct MessageRoute {
        MessageState* first = nullptr;
        double transfer_ms = 0;
    };
    std::vector<MessageRoute> routes;
    // The sums a summary needs, made by the timing loop (TimingLoop.h). The FLOPs are summed per
    // device in program order, then over the devices in order (in the last bits they may differ
    // from one sum in program order, device after device); each device's core_ms is its own sum
    // in program order, the same to the last bit as sim/LowerBound.cpp's.
    struct SummarySums {
        double model_flops = 0, recompute_flops = 0;  // per replica, as sim/StepFlops.h counts them
        std::vector<double> core_ms;                  // per device, sim/LowerBound.h's core(d)
        std::vector<int> chain_of_microbatch;         // per column (MessageSlots::denseOf), its forwards' chain
        // Per column, the device whose forward set its chain: the loop runs the devices
        // interleaved, and the chain kept is that of the last forward in device order, as a walk
        // device after device would keep (the same for any plan whose micro-batches keep to a
        // chain). Empty for a plan of one chain, where every forward sets the same one.
        std::vector<int> chain_set_by;
    };

    // The tables of `plan`, whatever plan they held before: every table is remade, and the
    // vectors keep their room. Simulator::run keeps one set per thread, so that simulating again
    // (the passes' trials, a timing's repeats) allocates none of them (issue 45). Errors for plans
    // that cannot be interpreted (Simulator::run's): the chains, an operand out of range, too
    // many (stage, micro-batch) pairs.
    std::optional<Error> rebuild(const Plan& plan, bool summary);
    SimulationTables() = default;
    // Moved, never copied: the routes point into the message table, which a move keeps.
    SimulationTables(SimulationTables&&) = default;
    SimulationTables& operator=(SimulationTables&&) = default;
    SimulationTables(const SimulationTables&) = delete;
    SimulationTables& operator=(const SimulationTables&) = delete;

    PipelineTopology topology;
    MessageSlots messages;
    int stageCount = 0;
    int microbatches = 0;     // the tables' micro-batch columns (MessageSlots)
    int microbatchCount = 0;  // Plan::microbatchCount
    // A forward is checkpointed when its device recomputes it later (docs/execution-model.md).
    std::vector<std::uint8_t> checkpointed, split;  // split: the Is, sized with a summary only
    std::vector<double> statics;
    std::vector<std::size_t> recomputes;  // per device: its Rs, so that their hidden parts are one allocation
    std::vector<StageRow, UninitialisedAllocator<StageRow>> stages;  // every field written by fillStages
    // Per device, the program the loop reads: the plan's own, or a copy with micro-batches
    // renumbered densely (MessageSlots) when the plan's numbers would make the tables too wide,
    // so that the loop never translates a number.
    std::vector<const Instruction*> code;
    std::vector<std::vector<Instruction>> renumbered;
    SummarySums sums;  // filled only when built with a summary
    // Per message (and the sink row after them): when it arrives, and which device waits for
    // it. A contention round resets only the slots it sent to (listed in `touched`), so the next
    // one starts from all unsent; a single timing keeps no list and leaves the table for a later
    // timing, if any, to reset whole. A send clears the slot's waiter as it wakes it, and the loop
    // clears the slots its blocked devices still wait on. `touched`, made by the first round
    // (TimingLoop.h), has room for one slot per instruction and is left uninitialised: the loop
    // writes it through a pointer, with no growth check or call per message (issue 45).
    std::vector<MessageState, UninitialisedAllocator<MessageState>> messageStates;  // sized unwritten, then memset
    std::unique_ptr<std::size_t[]> touched;
    std::size_t touchedCount = 0;
    bool messagesUntracked = false;  // a timing without the list ran: reset the whole table
    // Back to all unsent: slot by slot when a timing touched few, else the whole table.
    void resetMessages();

private:
    void fillStages(const Plan& plan);
    void fillMessageSlots();
    void renumber(const Plan& plan);
    std::optional<Error> walk(const Plan& plan, bool summary);
    // The bounds of the operands over all programs, which size the tables and find a bad one.
    struct Census {
        unsigned largestStage = 0;   // a negative stage wraps beyond any stage count
        int largestMicrobatch = -1;  // REDUCE_GRAD's and OPT's numbers too (Plan::microbatchCount)
        int smallestMicrobatch = 0;  // of the instructions that have a micro-batch
    };
    void censusDevice(const Plan& plan, std::size_t device, Census& census);
};

}  // namespace mario
