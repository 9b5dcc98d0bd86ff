#pragma once
// PyTorch's lowering of a compute-only schedule into per-rank programs with communication
// (torch.distributed.pipelining, _PipelineScheduleRuntime._prepare_schedule_with_comms), so
// that a "compute_comms" CSV holds what PyTorch itself would run for the same order.
//
// Mario's own programs place each RECV right before the computation that needs it, which its
// simulator (addressed messages) does not mind. PyTorch's runtime posts one NCCL send or
// receive per action, and NCCL pairs a rank pair's operations in the order they are posted:
// its lowering therefore appends each RECV to the receiver's program at the moment the sender
// issues the SEND, so that every rank pair receives in the order it sends. Writing Mario's
// placement instead could pair a forward's activation with a backward's gradient.
//
// FSDP's UNSHARD/RESHARD are left out: they do nothing for stages that are not FSDP modules,
// and Mario does not model FSDP. They take turns in PyTorch's round robin, so on ranks that
// hold several stages PyTorch's own lowering can post a RECV earlier or later than this one;
// every rank still receives from each peer in the order it sends (docs/pytorch.md).
#include <string>
#include <vector>

#include "core/schedule/Instruction.h"
#include "core/schedule/ScheduleShape.h"
#include "core/util/Result.h"

namespace mario {

// `order[r]` holds rank r's computations (F, B, I, W) in program order; stage s runs on rank
// `stageRank[s]`; a stage's gradients are complete after `microbatches` full or weight
// backwards. Per rank, the lowered program as the cells PyTorch 2.15 writes:
//  - _add_reduce_grad: sREDUCE_GRAD right after the B or W that completes stage s, and
//    sWAIT_REDUCE_GRAD right after it;
//  - _add_send_recv: ranks take turns in rank order, one ready action each per round (a
//    forward is ready once its input was received or made on the same rank, a backward
//    likewise with its gradient; REDUCE_GRAD and its wait are always ready and take their
//    turns too); an action whose output crosses to another rank is followed by its SEND, and
//    the matching RECV is appended to the receiving rank's program;
//  - _add_wait_send: WAIT_SEND_F right after the rank's backward (B or I) of the stage and
//    micro-batch whose forward it sent; the other sends' waits at the end, in send order.
// Fails when no rank can go on (an order that deadlocks), as PyTorch does.
Result<std::vector<std::vector<std::string>>> lowerLikePyTorch(const ComputeOrder& order,
                                                               const std::vector<int>& stageRank, int microbatches);

}  // namespace mario
