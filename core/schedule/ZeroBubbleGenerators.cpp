// Zero-bubble schedules (Qi, Wan, Huang, Lin: "Zero Bubble Pipeline Parallelism", ICLR 2024,
// and "Pipeline Parallelism with Controllable Memory", NeurIPS 2024). The backward is split
// into I (input gradient, on the critical path between stages) and W (weight gradient, local),
// and the W's are moved into what would otherwise be bubbles.
#include <algorithm>

#include "core/schedule/Generators.h"

namespace mario {
namespace {

// The authors' hand-written ZB-H1 / ZB-H2 order with c = 1 / 2: device r warms up with
// c·(p − 1 − r) forwards, then repeats F, I, W with each W lagging c·r micro-batches behind
// its I, and drains the lagging W's last. With c = 1 the forwards in flight are 1F1B's and
// the drain's bubbles fill with W; with c = 2 device r keeps up to 2(p − r) − 1 forwards in
// flight and, when F = I = W, never idles after its first forward.
ComputeOrder zeroBubbleHandcrafted(int devices, int microbatches, int c) {
    const int p = devices, n = microbatches;
    ComputeOrder order(p);
    for (int r = 0; r < p; ++r) {
        auto& program = order[r];
        const int warmup = std::min(n, c * (p - 1 - r));
        const int lag = std::min(n, c * r);
        for (int m = 0; m < warmup; ++m) program.push_back({Op::Forward, r, m});
        for (int i = 0; i < n; ++i) {
            if (warmup + i < n) program.push_back({Op::Forward, r, warmup + i});
            program.push_back({Op::BackwardInput, r, i});
            if (i >= lag) program.push_back({Op::BackwardWeight, r, i - lag});
        }
        for (int m = n - lag; m < n; ++m) program.push_back({Op::BackwardWeight, r, m});
    }
    return order;
}

// Emits one device's V-shape program: counters per leg (0: stage d on the way down,
// 1: stage 2p − 1 − d on the way up), dropping the padding micro-batches ≥ n at the end.
class VProgram {
public:
    VProgram(int stage0, int stage1, int microbatches) : stages_{stage0, stage1}, n_(microbatches) {}

    void forward(int leg) { emit(Op::Forward, leg, forwards_[leg]++); }
    void input(int leg) { emit(Op::BackwardInput, leg, inputs_[leg]++); }
    void weight(int leg) { emit(Op::BackwardWeight, leg, weights_[leg]++); }
    int forwards(int leg) const { return forwards_[leg]; }
    int inputs(int leg) const { return inputs_[leg]; }
    int weights(int leg) const { return weights_[leg]; }
    std::vector<Instruction> take() { return std::move(program_); }

private:
    void emit(Op op, int leg, int microbatch) {
        if (microbatch < n_) program_.push_back({op, stages_[leg], microbatch});
    }
    int stages_[2];
    int n_;
    int forwards_[2] = {0, 0}, inputs_[2] = {0, 0}, weights_[2] = {0, 0};
    std::vector<Instruction> program_;
};

}  // namespace

ComputeOrder generateZeroBubbleH1(int devices, int microbatches) {
    return zeroBubbleHandcrafted(devices, microbatches, 1);
}

ComputeOrder generateZeroBubbleH2(int devices, int microbatches) {
    return zeroBubbleHandcrafted(devices, microbatches, 2);
}

// Interleaved zero bubble (PyTorch's ScheduleInterleavedZeroBubble): Megatron's interleaved
// order with one forward less of warm-up per later device, I in place of B, and on device r
// each W emitted r backwards after its I (first in, first out), the rest at the end.
// Forwards visit the device's stages in blocks of `groupSize` micro-batches, backwards the
// same blocks from the last stage down.
ComputeOrder generateInterleavedZeroBubble(int devices, int chunks, int microbatches, int groupSize) {
    const int p = devices, v = chunks, g = groupSize;
    const int total = microbatches * v;
    ComputeOrder order(p);
    for (int r = 0; r < p; ++r) {
        auto& program = order[r];
        const int warmup = std::min(total, (v - 1) * g + (p - 1 - r));
        std::vector<int> forwards(v, 0), inputs(v, 0), weights(v, 0);
        std::vector<int> pendingChunks;  // chunk of each I, in order; W's follow the same order
        std::size_t nextWeight = 0;
        auto emitForward = [&](int k) {
            const int chunk = (k / g) % v;
            program.push_back({Op::Forward, chunk * p + r, forwards[chunk]++});
        };
        auto emitInput = [&](int k) {
            const int chunk = v - 1 - ((k - warmup) / g) % v;
            program.push_back({Op::BackwardInput, chunk * p + r, inputs[chunk]++});
            pendingChunks.push_back(chunk);
        };
        auto emitWeight = [&] {
            const int chunk = pendingChunks[nextWeight++];
            program.push_back({Op::BackwardWeight, chunk * p + r, weights[chunk]++});
        };
        for (int k = 0; k < total + warmup; ++k) {
            if (k < total) emitForward(k);
            if (k < warmup) continue;
            emitInput(k);
            if (k - warmup >= r) emitWeight();
        }
        while (nextWeight < pendingChunks.size()) emitWeight();
    }
    return order;
}

// ZBV, the authors' hand-crafted V schedule (zero-bubble repository, handcrafted_zb_v.py; the
// same order as PyTorch's ScheduleZBVZeroBubble). Device r holds stage r and stage 2p − 1 − r.
// With fewer than 2p − 1 micro-batches the order is built for 2p − 1 and the extra ones
// dropped, as the authors do.
ComputeOrder generateZbv(int devices, int microbatches) {
    const int p = devices;
    const int padded = std::max(2 * p - 1, microbatches);
    ComputeOrder order(p);
    for (int r = 0; r < p; ++r) {
        VProgram v(r, 2 * p - 1 - r, microbatches);
        for (int k = 0; k < 2 * (p - r) - 1; ++k) v.forward(0);
        for (int k = 0; k < r; ++k) {
            v.forward(1);
            v.forward(0);
        }
        for (int k = 0; k < p - r; ++k) {
            v.forward(1);
            v.input(1);
            v.weight(1);
        }
        while (v.forwards(1) < v.forwards(0) || v.forwards(0) < padded) {
            if (v.forwards(0) < padded) v.forward(0);
            v.input(0);
            v.weight(0);
            v.forward(1);
            v.input(1);
            v.weight(1);
        }
        for (int k = 0; k < r; ++k) {
            v.input(0);
            v.input(1);
        }
        for (int k = 0; k < p - r; ++k) {
            v.input(0);
            v.weight(0);
        }
        while (v.weights(1) < v.inputs(1)) v.weight(1);
        while (v.weights(0) < v.inputs(0)) v.weight(0);
        order[r] = v.take();
    }
    return order;
}

}  // namespace mario
