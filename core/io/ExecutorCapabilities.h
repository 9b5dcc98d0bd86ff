#pragma once
// What a mario-executor binary can run, as `mario-executor capabilities` prints it: one JSON
// line, read by the workbench before it offers "Run on one GPU" (issue 14, item 6). Its single
// owner: the executor writes the line with writeExecutorCapabilities and the window parses it
// with parseExecutorCapabilities, so the two cannot drift apart.
//
//   {"cuda": false, "devices": 0, "partition_sms": false, "nccl": true, "version": "0.9.0",
//    "torch": "1.13.1", "protocol": 1, "cuda_reason": "…", "partition_reason": "…"}
//
// The reasons are there only when the capability is missing: one sentence each, as the run
// itself would say it, for a tooltip on a disabled menu entry.
#include <string>
#include <string_view>

#include "core/util/Result.h"

namespace mario {

struct ExecutorCapabilities {
    bool cuda = false;  // this LibTorch has CUDA and sees a GPU: --backend cuda can run
    int devices = 0;    // GPUs visible to it
    // One GPU's SMs can be cut per pipeline device (--partition-sms, docs/gpu.md): green
    // contexts in the driver and CUDA streams in LibTorch.
    bool partition_sms = false;
    bool nccl = false;             // built with NCCL: multi-process GPU runs can all-reduce
    std::string version;           // the executor's own (the project version)
    std::string torch;             // LibTorch's version
    int protocol = 0;              // the live-event protocol it speaks (core/io/LiveEvents.h)
    std::string cuda_reason;       // why not cuda, empty when it can
    std::string partition_reason;  // why not partition_sms, empty when it can
};

std::string writeExecutorCapabilities(const ExecutorCapabilities& capabilities);

// One line (surrounding whitespace ignored). Errors name the field ("devices: expected a
// non-negative integer") or say the text is not a JSON object; unknown keys are ignored, so a
// newer executor may add some.
Result<ExecutorCapabilities> parseExecutorCapabilities(std::string_view line);

}  // namespace mario
