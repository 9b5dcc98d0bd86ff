#pragma once
// Scheme generators. Each returns the compute order of every device; the layout says which
// stages sit where. Communication is added afterwards by insertCommunication(), the same way
// for every scheme, so no generator knows about SEND/RECV.
#include "core/schedule/ScheduleShape.h"
#include "core/util/Result.h"

namespace mario {

// Checks sizes (devices ≥ 1, even where the scheme needs it, interleaved divisibility,
// DualPipe's 2p micro-batches) and names what is wrong.
Result<bool> checkShape(const ScheduleShape& shape);

PipelineLayout pipelineLayout(const ScheduleShape& shape);

// Dispatches on shape.scheme.
Result<ComputeOrder> generateComputeOrder(const ScheduleShape& shape);

// GPipe: all forwards, then all backwards.
ComputeOrder generateGPipe(int devices, int microbatches);
// 1F1B ("V"): warm-up of min(p − d − 1, m) forwards, then one forward one backward.
ComputeOrder generateOneFOneB(int devices, int microbatches);
// Megatron's interleaved 1F1B ("W"): `chunks` stages per device, stage c·p + d on device d.
ComputeOrder generateInterleaved(int devices, int chunks, int microbatches, int groupSize);
// Chimera ("X"): a down chain on devices 0..p−1 and an up chain on p−1..0.
ComputeOrder generateChimera(int devices, int microbatches, double forwardCost, double backwardCost);
// Looped breadth-first (PyTorch's ScheduleLoopedBFS): every micro-batch's forward through a
// device's first stage, then its next stage; backwards from the last stage, last micro-batch first.
ComputeOrder generateLoopedBfs(int devices, int chunks, int microbatches);

// Split-backward schedules (I and W); sources in ZeroBubbleGenerators.cpp and DualPipeGenerator.cpp.
ComputeOrder generateZeroBubbleH1(int devices, int microbatches);
ComputeOrder generateZeroBubbleH2(int devices, int microbatches);
ComputeOrder generateInterleavedZeroBubble(int devices, int chunks, int microbatches, int groupSize);
ComputeOrder generateZbv(int devices, int microbatches);
ComputeOrder generateDualPipeV(int devices, int microbatches);
ComputeOrder generateDualPipe(int devices, int microbatches);

}  // namespace mario
