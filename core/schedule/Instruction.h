#pragma once
// The schedule IR: one instruction of a device program (DESIGN.md §3).
#include <cstdint>
#include <string>
#include <string_view>

#include "util/Result.h"

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

    friend bool operator==(const Instruction&, const Instruction&) = default;
};

constexpr bool isCompute(Op op) {
    return op == Op::Forward || op == Op::Recompute || op == Op::Backward ||
           op == Op::BackwardInput || op == Op::BackwardWeight || op == Op::ReduceGrad ||
           op == Op::Optimizer;
}
constexpr bool isSend(Op op) { return op == Op::SendForward || op == Op::SendBackward; }
constexpr bool isRecv(Op op) { return op == Op::RecvForward || op == Op::RecvBackward; }
constexpr bool isCommunication(Op op) { return isSend(op) || isRecv(op); }
constexpr bool hasMicrobatch(Op op) { return op != Op::ReduceGrad && op != Op::Optimizer; }
// The instruction that consumes a stage's activations first in the backward direction.
constexpr bool isBackwardStart(Op op) { return op == Op::Backward || op == Op::BackwardInput; }

// The TYPE part of an action string ("F", "SEND_F", "REDUCE_GRAD", ...).
std::string_view opName(Op op);

// "2F5", "0SEND_F0", "1REDUCE_GRAD".
std::string toActionString(const Instruction& instruction);

// Parses an action string; the error says what is wrong with it.
Result<Instruction> parseAction(std::string_view text);

}  // namespace mario
