#pragma once
// Runs a plan in this process: one thread per (device, data-parallel replica), LibTorch stages
// on the CPU or all on one GPU with a stream each, optional single-device reference for the
// gradient check. Torch-free API so the CLI and the tests
// compile without Torch headers.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"
#include "executor/ModelSpec.h"
#include "executor/TokenFile.h"

namespace mario::exec {

struct ExecutorOptions {
    ModelSpec model;
    std::string device = "cpu";     // torch device of every worker: "cpu", or "cuda:N" (all on one GPU)
    std::string dtype = "float64";  // float64 keeps pipeline and reference equal to ~1e-15
    int data_parallel = 1;          // replicas of the pipeline, as threads of this process
    std::string tokens_file;        // token ids (.bin uint16 or text); empty: synthetic tokens
    // tokens_file as the CLI already read it (once: a pipe has nothing left for a second read);
    // none: the run reads tokens_file itself.
    std::shared_ptr<const TokenFile> tokens;
    int iterations = 1;
    std::uint64_t seed = 0;
    double lr = 0.01;
    bool adam = false;  // optimizer: Adam instead of plain SGD
    double recv_timeout_s = 30;
    bool reference = false;
    // Where to write the step for another runtime to repeat (--dump-step, StepDump.h); empty:
    // nowhere. One iteration in float64 (main.cpp refuses anything else).
    std::string dump_step_dir;
    double rtol = 1e-5;  // torch::allclose tolerances for grads_match (PyTorch pipelining tests)
    double atol = 4e-5;
    // Live profiling (issue 5): called with one line of the live-event protocol at a time
    // (core/io/LiveEvents.h) — every instruction's start and end (steady clock on CPU, CUDA
    // events on a GPU, see InstructionClock) and a summary per iteration. Calls are serialised;
    // they come from the device threads.
    std::function<void(const std::string&)> on_event;
    // Single-GPU mode (docs/gpu.md): every pipeline device (and replica) computes on its own
    // disjoint SM partition with its own stream, as on a GPU of its own; without it they share
    // the GPU's SMs on PyTorch's pool streams.
    bool partition_sms = false;
    // With partition_sms, where the driver or GPU cannot partition: shared streams instead of
    // an error, and a note through on_notice that says why.
    bool shared_streams_fallback = false;
    std::function<void(const std::string&)> on_notice;

    // Whether the optimizer keeps a copy of the gradients it steps with: what the reference check
    // and the step dump read (Optimizer.h says why runs without either do not keep one).
    bool snapshotGradients() const { return reference || !dump_step_dir.empty(); }
};

struct RunReport {
    double loss = 0;  // of the last iteration: mean over micro-batches
    std::optional<double> reference_loss;
    // Per-tensor relative: max over parameters of max|g - g_ref| / (max|g_ref| + 1e-12).
    double max_grad_rel_diff = 0;
    double max_grad_abs_diff = 0;
    bool grads_match = true;              // every gradient agrees (RunSetup.h gradientsAgree)
    std::vector<std::string> mismatched;  // parameter names that do not match (or are missing)
    std::size_t compared_parameters = 0;  // reference tensors compared
    double max_weight_abs_diff = 0;       // weights after the last optimizer step
    bool plan_layers_used = false;        // the plan's `layers` fit this model (else §4's rule)
    // Per device, of the last iteration: see DeviceWorker::peakActivationBytes (the plan's
    // activation/checkpoint bytes weighted by what the interpreter really held).
    std::vector<double> peak_activation_bytes;
    // What the allocator really held at most in the last iteration, per pipeline device: each
    // device's own account where devices share a GPU or the CPU (DeviceMemoryBook.h: its
    // weights, gradients, optimizer state and activations), its GPU's statistics in a
    // multi-process CUDA run; empty in a multi-process CPU run, which has no reading.
    std::vector<double> peak_allocated_bytes;
    // Wall time of every iteration (multi-process: the slowest rank's), from the first
    // instruction to the last one finishing on the device; the first includes warm-up.
    std::vector<double> step_ms;
    std::size_t instructions = 0;
    int devices = 0;
    int data_parallel = 1;
    int rank = 0;  // multi-process runs: this process's rank; only rank 0 holds the whole report
    int world = 1;
    // Why the run's output (--dump-step) could not be written, in one line; empty when it was or
    // none was asked for. Not a failed run: the CLI exits 2 for it, as `mario` does.
    std::string output_error;
};

// Errors: the topology cannot be built, or a worker failed ("device D, instruction X: why").
Result<RunReport> runPlan(const Plan& plan, const ExecutorOptions& options);

}  // namespace mario::exec
