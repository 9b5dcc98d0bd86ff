#pragma once
// The schedule IR: one instruction of a device program (docs/execution-model.md).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/Result.h"

namespace mario {

enum class Op : std::uint8_t {
    Forward,         // F
    Recompute,       // R
    Backward,        // B (input and weight gradients)
    BackwardInput,   // I
    BackwardWeight,  // W
    SendForward,     // SEND_F
    RecvForward,     // RECV_F
    SendBackward,    // SEND_B
    RecvBackward,    // RECV_B
    ReduceGrad,      // REDUCE_GRAD (no micro-batch)
    Optimizer,       // OPT (no micro-batch)
};

struct Instruction {
    Op op = Op::Forward;
    std::int32_t stage = 0;
    std::int32_t microbatch = -1;  // -1 for REDUCE_GRAD and OPT
    // Set on the forward of an overlapped pair (PyTorch's OVERLAP_F_B, DualPipe's overlapped
    // chunks): this F and the backward right after it in the program run as one composite
    // instruction (docs/execution-model.md, "Overlapped pairs").
    bool overlapped = false;

    // The same work: pairing is where an instruction runs, not what it is, so a search for
    // "2F5" finds the forward of a pair too.
    friend bool operator==(const Instruction& a, const Instruction& b) {
        return a.op == b.op && a.stage == b.stage && a.microbatch == b.microbatch;
    }
};

constexpr bool isCompute(Op op) {
    return op == Op::Forward || op == Op::Recompute || op == Op::Backward || op == Op::BackwardInput ||
           op == Op::BackwardWeight || op == Op::ReduceGrad || op == Op::Optimizer;
}
constexpr bool isSend(Op op) { return op == Op::SendForward || op == Op::SendBackward; }
constexpr bool isRecv(Op op) { return op == Op::RecvForward || op == Op::RecvBackward; }
constexpr bool isCommunication(Op op) { return isSend(op) || isRecv(op); }
constexpr bool hasMicrobatch(Op op) { return op != Op::ReduceGrad && op != Op::Optimizer; }
// The instruction that consumes a stage's activations first in the backward direction.
constexpr bool isBackwardStart(Op op) { return op == Op::Backward || op == Op::BackwardInput; }

// One number for a (stage, micro-batch) pair: the key of the maps that find a forward's
// recomputation or backward, or check that each pair appears once.
constexpr std::uint64_t stageMicrobatchKey(int stage, int microbatch) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stage)) << 32) |
           static_cast<std::uint32_t>(microbatch);
}
constexpr std::uint64_t stageMicrobatchKey(const Instruction& ins) {
    return stageMicrobatchKey(ins.stage, ins.microbatch);
}

// The TYPE part of an action string ("F", "SEND_F", "REDUCE_GRAD", ...).
std::string_view opName(Op op);

// "2F5", "0SEND_F0", "1REDUCE_GRAD".
std::string toActionString(const Instruction& instruction);

// Parses an action string; the error says what is wrong with it.
Result<Instruction> parseAction(std::string_view text);

// A pair's second half: a forward followed by a backward of any stage (B or I).
constexpr bool canCloseOverlap(Op op) { return isBackwardStart(op); }

// One forward and one backward (B or I), in either order, as an overlapped pair: the forward
// first, marked overlapped. None for any other two instructions.
std::optional<std::pair<Instruction, Instruction>> overlappedPair(Instruction a, Instruction b);

// "(0F7;7B3)OVERLAP_F_B", PyTorch's spelling of a composite.
std::string toOverlapString(const Instruction& forward, const Instruction& backward);

// One entry of a plan's program: a simple action, or a composite, which gives its forward
// (marked overlapped) and then its backward. A composite must hold one F and one B or I, in
// either order.
Result<std::vector<Instruction>> parseProgramEntry(std::string_view text);

// Where the overlapped pair that holds program[i] starts (i or i − 1); none when program[i]
// is not half of a well-formed pair.
std::optional<std::size_t> overlappedPairAt(const std::vector<Instruction>& program, std::size_t i);

// The program's entries as written in a plan file: one string per instruction, one per pair.
std::vector<std::string> toProgramEntries(const std::vector<Instruction>& program);

}  // namespace mario
