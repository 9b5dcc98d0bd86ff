// DualPipe and DualPipeV (DeepSeek-AI, "DualPipe", github.com/deepseek-ai/DualPipe; the V
// variant is the same program on a V placement, also PyTorch's ScheduleDualPipeV). Every
// device runs one program of eight steps over its two stages; only the step counts differ
// from device to device. Forward and backward of the two legs are overlapped pairs in the
// steady phase (DualPipe hides each pair's communication under its computation); the split
// backward (I now, W later from a first-in first-out queue) appears where it fills the
// warm-up and drain.
#include <algorithm>
#include <deque>

#include "core/schedule/Generators.h"

namespace mario {
namespace {

// One device's two legs: leg 0 is the one whose input reaches the device first.
struct Leg {
    int stage = 0;
    int first_microbatch = 0;  // DualPipe's second direction takes the second half of the batch
};

class DualProgram {
public:
    DualProgram(Leg leg0, Leg leg1) : legs_{leg0, leg1} {}

    void forward(int leg) { emit(Op::Forward, leg, forwards_[leg]++); }
    void backward(int leg) { emit(Op::Backward, leg, backwards_[leg]++); }
    // The input gradient now; its weight gradient waits in the queue.
    void input(int leg) {
        const int m = backwards_[leg]++;
        emit(Op::BackwardInput, leg, m);
        weights_.push_back({Op::BackwardWeight, legs_[leg].stage, legs_[leg].first_microbatch + m});
    }
    void backwardOrInput(int leg, bool split) { split ? input(leg) : backward(leg); }
    void weight() {
        if (weights_.empty()) return;
        program_.push_back(weights_.front());
        weights_.pop_front();
    }
    // A forward of one leg overlapped with a full backward of the other: DualPipe's
    // overlapped chunk, PyTorch's OVERLAP_F_B (timed by the plan's overlap rule).
    void pair(int forwardLeg, int backwardLeg) {
        forward(forwardLeg);
        program_.back().overlapped = true;
        backward(backwardLeg);
    }
    std::vector<Instruction> take() { return std::move(program_); }

private:
    void emit(Op op, int leg, int k) { program_.push_back({op, legs_[leg].stage, legs_[leg].first_microbatch + k}); }

    Leg legs_[2];
    int forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
    std::deque<Instruction> weights_;
    std::vector<Instruction> program_;
};

// The eight steps for a device at distance h from its nearer pipeline end, with half = H
// devices per half and m micro-batches per leg; `middle` devices (h = H − 1) do not pair
// their first steady forward and backward.
std::vector<Instruction> dualProgram(int h, int half, int m, bool middle, Leg leg0, Leg leg1) {
    DualProgram program(leg0, leg1);
    for (int k = 0; k < 2 * (half - h - 1); ++k) program.forward(0);
    for (int k = 0; k < h + 1; ++k) {
        program.forward(0);
        program.forward(1);
    }
    for (int k = 0; k < half - h - 1; ++k) {
        program.input(1);
        program.weight();
        program.forward(1);
    }
    for (int i = 0; i < m - 2 * half + h + 1; ++i) {
        if (i == 0 && middle) {
            program.forward(0);
            program.backward(1);
        } else {
            program.pair(0, 1);
        }
        program.pair(1, 0);
    }
    for (int k = 0; k < half - h - 1; ++k) {
        program.backward(1);
        program.pair(1, 0);
    }
    // The last h + 1 of these 2(h + 1) backwards are split; the switch falls one backward
    // earlier on odd distances.
    bool split = false;
    for (int i = 0; i < h + 1; ++i) {
        if (i == (h + 1) / 2 && h % 2 == 1) split = true;
        program.backwardOrInput(1, split);
        if (i == (h + 1) / 2 && h % 2 == 0) split = true;
        program.backwardOrInput(0, split);
    }
    for (int k = 0; k < half - h - 1; ++k) {
        program.weight();
        program.input(0);
    }
    for (int k = 0; k < h + 1; ++k) program.weight();
    return program.take();
}

}  // namespace

// Device r holds stage r of the down chain (micro-batches 0..N/2 − 1) and stage p + (p − 1 − r)
// of the up chain (micro-batches N/2..N − 1); the direction whose first stage is nearer to
// the device is its leg 0.
ComputeOrder generateDualPipe(int devices, int microbatches) {
    const int p = devices, half = p / 2, perLeg = microbatches / 2;
    ComputeOrder order(p);
    for (int r = 0; r < p; ++r) {
        const int h = std::min(r, p - 1 - r);
        const Leg down{r, 0}, up{p + (p - 1 - r), perLeg};
        order[r] = r < half ? dualProgram(h, half, perLeg, h == half - 1, down, up)
                            : dualProgram(h, half, perLeg, h == half - 1, up, down);
    }
    return order;
}

// Device r holds stage r (leg 0) and stage 2p − 1 − r (leg 1); every micro-batch walks both.
ComputeOrder generateDualPipeV(int devices, int microbatches) {
    const int p = devices;
    ComputeOrder order(p);
    for (int r = 0; r < p; ++r)
        order[r] = dualProgram(r, p, microbatches, r == p - 1, Leg{r, 0}, Leg{2 * p - 1 - r, 0});
    return order;
}

}  // namespace mario
