#pragma once
// The optimizer step of one stage, shared by the pipeline's workers (OPT, or the end of a
// program that has none) and the single-device reference, so both step identically and the
// reference check compares weights, not two optimizers. Torch-free header.
namespace mario::exec {

struct StageRuntime;

class Optimizer {
public:
    // Plain SGD, or Adam (beta 0.9/0.999, eps 1e-8, no weight decay).
    Optimizer(double lr, bool adam) : lr_(lr), adam_(adam) {}

    // Steps with the gradients as they stand, then zeroes them; snapshots the gradients first
    // (StageRuntime::gradSnapshot, what the reference check compares) and marks the stage
    // stepped. Adam's moments live in the stage, so every stage steps on its own history.
    void step(StageRuntime& stage) const;

private:
    double lr_;
    bool adam_;
};

}  // namespace mario::exec
