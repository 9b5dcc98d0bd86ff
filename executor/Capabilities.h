#pragma once
// `mario-executor capabilities`: what this binary can run, asked by the workbench before it
// offers "Run on one GPU" (issue 14, item 6) and by anyone scripting a GPU node. Torch-free
// API; the answer's format belongs to core/io/ExecutorCapabilities.h.
#include "core/io/ExecutorCapabilities.h"

namespace mario::exec {

// Asks LibTorch for CUDA and its GPUs, and, where there is a GPU, the driver for SM partitions
// by creating (and dropping) two green contexts on GPU 0; says what was compiled in (NCCL, the
// CUDA side of LibTorch). Never fails: a missing capability carries its reason.
ExecutorCapabilities probeCapabilities();

}  // namespace mario::exec
