#pragma once
// Bytes per element of each element-wise kernel of a transformer block, forward and backward, as
// the kernels read and write them (bf16 tensors, byte masks; docs/cost-model.md#kernels). One
// owner: TransformerKernels charges them, and `mario-executor calibrate` (CalibrationKernels.cpp)
// fits the preset's element-wise rate from measured kernels charged the same bytes.

namespace mario::kernel_bytes {

constexpr double kBf16 = 2;
constexpr double kFp32 = 4;
// LayerNorm/RMSNorm reads x, writes y; its backward reads x and dy, writes dx (the weights'
// gradients are per-column partial sums, negligible). A block runs two.
constexpr double kNormForward = 2 * kBf16, kNormBackward = 3 * kBf16;
constexpr int kNormsPerBlock = 2;
// GeLU (bias fused) reads its input, writes its output; backward reads input and dy, writes dx.
// SwiGLU reads gate and up, writes their product; backward reads the three, writes two.
constexpr double kGeluForward = 2 * kBf16, kGeluBackward = 3 * kBf16;
constexpr double kSwigluForward = 3 * kBf16, kSwigluBackward = 5 * kBf16;
// The residual add (with bias-dropout: Megatron's fused bias_dropout_add) reads the branch and
// the residual, writes the sum and the byte mask; its backward applies the mask to dy (read dy
// and mask, write) and autograd then adds the branch's gradient to the residual's (read two,
// write one). A block runs two.
constexpr double kResidualForward = 3 * kBf16, kGradientSum = 3 * kBf16;
constexpr double kMaskBackward = 2 * kBf16 + 1;
constexpr int kResidualsPerBlock = 2;
// Rotary embedding reads and writes Q and K, forward and backward.
constexpr double kRotary = 2 * kBf16;
// Per attention score: the softmax reads scores and writes probabilities (backward reads the
// probabilities and their gradient, writes one); unfused (eager) attention scales the scores
// (read, write) and applies the causal mask (read, write, read the byte mask), each forward and
// backward; dropout on the probabilities reads, writes and keeps a byte mask.
constexpr double kSoftmaxForward = 2 * kBf16, kSoftmaxBackward = 3 * kBf16;
constexpr double kScale = 2 * kBf16, kCausalMask = 2 * kBf16 + 1, kDropout = 2 * kBf16 + 1;
// A layout copy (the attention output from head-major back to token-major) reads and writes.
constexpr double kCopy = 2 * kBf16;
// Megatron-LM's vocabulary-parallel cross-entropy per logit (megatron/mpu/cross_entropy.py, 2021;
// megatron/core/tensor_parallel/cross_entropy.py, 2024, unchanged): the bf16/fp16 logits are cast
// to fp32 (read 2, write 4), then five passes over the fp32 copy: the row maximum (read), its
// in-place subtraction (read, write), the in-place exp (read, write), the row sum (read) and the
// in-place division into the softmax kept for the backward (read, write). The backward multiplies
// that softmax by the loss gradient in place (read, write) and autograd casts it back to the
// logits' dtype (read 4, write 2). Six kernels forward, two backward.
constexpr double kCrossEntropyForward[] = {kBf16 + kFp32, kFp32, 2 * kFp32, 2 * kFp32, kFp32, 2 * kFp32};
constexpr double kCrossEntropyBackward[] = {2 * kFp32, kFp32 + kBf16};

}  // namespace mario::kernel_bytes
