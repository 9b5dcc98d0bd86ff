#pragma once
// The arithmetic a step does and how well it uses the GPUs (docs/cost-model.md#mfu): model
// FLOPs count each micro-batch's forward once and its backward as twice the forward (F, B, or
// I + W); hardware FLOPs add the recomputation (R) that checkpointing makes the GPUs repeat.
// MFU = model FLOPs / (step × GPUs × peak), HFU the same with hardware FLOPs, as in
// Korthikanti et al. 2022 and the PaLM paper.
#include <optional>
#include <string>

#include "core/schedule/Plan.h"
#include "core/sim/CostNames.h"

namespace mario {

struct StepFlops {
    double model_flops = 0;     // the whole step, every GPU of every replica
    double hardware_flops = 0;  // model FLOPs plus recomputation
    double gpus = 0;            // devices × tp × dp
    double model_tflops_per_gpu = 0;
    double hardware_tflops_per_gpu = 0;
    double mfu = 0;  // 0 when the plan has no FLOPs or no peak
    double hfu = 0;

    bool known() const { return model_flops > 0; }
};

// From the stages' forward_flops and the programs' F, B, I, W and R; the rates need the step
// (makespanMs > 0) and the utilisations the plan's peak_tflops.
StepFlops stepFlops(const Plan& plan, double makespanMs);
// The same from the programs' sums (per replica, F, I and W once, B twice, R apart), for a
// caller that has walked the programs already (sim/SimulationTables.h).
StepFlops stepFlopsOfSums(const Plan& plan, double modelFlops, double recomputeFlops, double makespanMs);
// The same counts over another step time (they do not depend on it): the rates, MFU and HFU
// again, without walking the programs a second time.
StepFlops retimed(StepFlops counted, double makespanMs, double peakTflops);

// Why the costs of `plan` claim more than its hardware computes, or nothing: timed alone (its
// costs as they are, `aloneMakespanMs`), the step's HFU (MFU with the recomputation, never
// below it) would be above 100% of peak_tflops. The line names the stage whose forward is the
// fastest in FLOP/s, the one to look at: "stages[3].forward_flops: 1e+11 FLOP in forward_ms
// 0.001 (1e+05 TFLOP/s per GPU) give the step an MFU of 3.6e+06% (HFU 3.6e+06%) of peak_tflops
// 312: its costs claim more than the hardware computes". A single forward may count more than
// its kernels compute (MFU counts the whole attention, FlashAttention the causal half), so the
// step is judged, not each stage. Nothing without a peak, FLOPs or a step. The simulator and
// the validator both refuse such a plan (3,632,569% was printed, issue 39).
// `counted` is the plan's stepFlops at any step time; only its counts are used. `names` say the
// stage's field and the peak as the user wrote them (null: the plan's fields, as above).
std::optional<std::string> utilisationProblem(const Plan& plan, const StepFlops& counted, double aloneMakespanMs,
                                              const CostNames* names = nullptr);

}  // namespace mario
