#pragma once
// Tensors and named tensor maps as bytes, for the TCP mesh between processes: dtype, shape and
// the raw little-endian data of a contiguous CPU copy. Reading checks every length, so a
// truncated message is an error, never a read out of bounds.
#include <cstddef>
#include <span>
#include <vector>

#include <torch/torch.h>

#include "executor/GptModel.h"

namespace mario::exec {

void appendTensor(std::vector<std::byte>& out, const torch::Tensor& tensor);
// Reads the tensor at `at` (on the CPU) and moves `at` past it; throws std::runtime_error.
torch::Tensor readTensor(std::span<const std::byte> bytes, std::size_t& at);

std::vector<std::byte> tensorBytes(const torch::Tensor& tensor);
torch::Tensor tensorFromBytes(std::span<const std::byte> bytes);

void appendParams(std::vector<std::byte>& out, const ParamMap& params);
// Reads the map at `at` and moves `at` past it; throws std::runtime_error.
ParamMap readParams(std::span<const std::byte> bytes, std::size_t& at);

}  // namespace mario::exec
