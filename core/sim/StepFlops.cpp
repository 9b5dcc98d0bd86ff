#include "core/sim/StepFlops.h"

namespace mario {

StepFlops stepFlops(const Plan& plan, double makespanMs) {
    StepFlops out;
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
    const double copies = double(plan.info.tensor_parallel) * plan.info.data_parallel;
    out.model_flops = model * copies;
    out.hardware_flops = (model + recompute) * copies;
    out.gpus = double(plan.devices.size()) * copies;
    if (makespanMs <= 0 || out.gpus <= 0) return out;
    const double seconds = makespanMs / 1000;
    out.model_tflops_per_gpu = out.model_flops / out.gpus / seconds / 1e12;
    out.hardware_tflops_per_gpu = out.hardware_flops / out.gpus / seconds / 1e12;
    if (plan.info.peak_tflops > 0) {
        out.mfu = out.model_tflops_per_gpu / plan.info.peak_tflops;
        out.hfu = out.hardware_tflops_per_gpu / plan.info.peak_tflops;
    }
    return out;
}

}  // namespace mario
