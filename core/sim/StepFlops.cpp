#include "core/sim/StepFlops.h"

#include <cstdio>
#include <limits>

namespace mario {

StepFlops stepFlops(const Plan& plan, double makespanMs) {
    double model = 0, recompute = 0;  // per replica, summed over the plan's devices (per GPU)
    for (const DeviceProgram& device : plan.devices)
        for (const Instruction& ins : device.program) {
            if (ins.stage < 0 || ins.stage >= int(plan.stages.size())) continue;
            const double f = plan.stages[ins.stage].cost.forward_flops;
            switch (ins.op) {
                case Op::Forward:
                case Op::BackwardInput:
                case Op::BackwardWeight: model += f; break;
                case Op::Backward: model += 2 * f; break;
                case Op::Recompute: recompute += f; break;
                default: break;
            }
        }
    return stepFlopsOfSums(plan, model, recompute, makespanMs);
}

StepFlops stepFlopsOfSums(const Plan& plan, double model, double recompute, double makespanMs) {
    StepFlops out;
    const double copies = double(plan.info.tensor_parallel) * plan.info.data_parallel;
    out.model_flops = model * copies;
    out.hardware_flops = (model + recompute) * copies;
    out.gpus = double(plan.devices.size()) * copies;
    return retimed(out, makespanMs, plan.info.peak_tflops);
}

StepFlops retimed(StepFlops counted, double makespanMs, double peakTflops) {
    StepFlops& out = counted;
    out.model_tflops_per_gpu = out.hardware_tflops_per_gpu = out.mfu = out.hfu = 0;
    if (makespanMs <= 0 || out.gpus <= 0) return out;
    const double seconds = makespanMs / 1000;
    out.model_tflops_per_gpu = out.model_flops / out.gpus / seconds / 1e12;
    out.hardware_tflops_per_gpu = out.hardware_flops / out.gpus / seconds / 1e12;
    if (peakTflops > 0) {
        out.mfu = out.model_tflops_per_gpu / peakTflops;
        out.hfu = out.hardware_tflops_per_gpu / peakTflops;
    }
    return out;
}

std::optional<std::string> utilisationProblem(const Plan& plan, const StepFlops& counted, double aloneMakespanMs,
                                              const CostNames* names) {
    const StepFlops flops = retimed(counted, aloneMakespanMs, plan.info.peak_tflops);
    // A rounding's worth above 1 is 1: costs computed at exactly the peak.
    if (!(flops.hfu > 1 + 1e-9)) return std::nullopt;
    std::size_t fastest = 0;
    double fastestRate = -1;
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const StageCost& c = plan.stages[s].cost;
        if (!(c.forward_flops > 0)) continue;
        const double rate =
            c.forward_ms > 0 ? c.forward_flops / c.forward_ms / 1e9 : std::numeric_limits<double>::infinity();
        if (rate > fastestRate) fastest = s, fastestRate = rate;
    }
    const StageCost& c = plan.stages[fastest].cost;
    const CostNames& named = names ? *names : planFieldNames();
    char text[400];
    std::snprintf(text, sizeof text,
                  ": %.4g FLOP in forward_ms %.4g (%.4g TFLOP/s per GPU) give the step an MFU of %.4g%% (HFU %.4g%%) "
                  "of %s %.4g: its costs claim more than the hardware computes",
                  c.forward_flops, c.forward_ms, fastestRate, 100 * flops.mfu, 100 * flops.hfu, named.peak.c_str(),
                  plan.info.peak_tflops);
    return named.field(fastest, "forward_flops") + text + named.peak_note;
}

}  // namespace mario
