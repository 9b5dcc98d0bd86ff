#pragma once
// The optimizer step of one stage, shared by the pipeline's workers (OPT, or the end of a
// program that has none) and the single-device reference, so both step identically and the
// reference check compares weights, not two optimizers. Torch-free header.
namespace mario::exec {

struct StageRuntime;

class Optimizer {
public:
    // Plain SGD, or Adam (beta 0.9/0.999, eps 1e-8, no weight decay). `snapshot`: keep a copy of
    // the gradients for the reference check. Only runs with --reference want it: the copy holds
    // one more gradient's bytes through the next step, which the simulator's static bytes
    // (weights, gradients, two Adam moments) do not count, and would spoil measured peaks.
    Optimizer(double lr, bool adam, bool snapshot = true) : lr_(lr), adam_(adam), snapshot_(snapshot) {}

    bool adam() const { return adam_; }

    // Steps with the gradients as they stand, then zeroes them; snapshots the gradients first
    // when asked (StageRuntime::gradSnapshot, what the reference check compares) and marks the
    // stage stepped. Adam's moments live in the stage, so every stage steps on its own history.
    void step(StageRuntime& stage) const;

private:
    double lr_;
    bool adam_;
    bool snapshot_;
};

}  // namespace mario::exec
