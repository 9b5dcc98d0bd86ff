#include "executor/TensorWire.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace mario::exec {
namespace {

void putU64(std::vector<std::byte>& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

std::uint64_t getU64(std::span<const std::byte> bytes, std::size_t& at) {
    if (bytes.size() - at < 8 || at > bytes.size()) throw std::runtime_error("truncated tensor message");
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::to_integer<std::uint64_t>(bytes[at + i]) << (8 * i);
    at += 8;
    return v;
}

void putRaw(std::vector<std::byte>& out, const void* data, std::size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    out.insert(out.end(), p, p + size);
}

}  // namespace

void appendTensor(std::vector<std::byte>& out, const torch::Tensor& tensor) {
    const torch::Tensor cpu = tensor.detach().to(torch::kCPU).contiguous();
    putU64(out, static_cast<std::uint64_t>(cpu.scalar_type()));
    putU64(out, static_cast<std::uint64_t>(cpu.dim()));
    for (auto size : cpu.sizes()) putU64(out, static_cast<std::uint64_t>(size));
    const std::size_t bytes = cpu.numel() * cpu.element_size();
    putU64(out, bytes);
    putRaw(out, cpu.data_ptr(), bytes);
}

torch::Tensor readTensor(std::span<const std::byte> bytes, std::size_t& at) {
    const auto type = static_cast<torch::ScalarType>(getU64(bytes, at));
    if (type != torch::kFloat64 && type != torch::kFloat32 && type != torch::kBFloat16 && type != torch::kFloat16 &&
        type != torch::kInt64)
        throw std::runtime_error("tensor message has an unexpected dtype");
    const std::uint64_t dims = getU64(bytes, at);
    if (dims > 8) throw std::runtime_error("tensor message has " + std::to_string(dims) + " dimensions");
    std::vector<int64_t> shape;
    for (std::uint64_t d = 0; d < dims; ++d) shape.push_back(static_cast<int64_t>(getU64(bytes, at)));
    const std::uint64_t size = getU64(bytes, at);
    torch::Tensor tensor = torch::empty(shape, torch::TensorOptions().dtype(type));
    if (size != static_cast<std::uint64_t>(tensor.numel() * tensor.element_size()) || bytes.size() - at < size)
        throw std::runtime_error("tensor message is truncated or its size does not match its shape");
    std::memcpy(tensor.data_ptr(), bytes.data() + at, size);
    at += size;
    return tensor;
}

std::vector<std::byte> tensorBytes(const torch::Tensor& tensor) {
    std::vector<std::byte> out;
    appendTensor(out, tensor);
    return out;
}

torch::Tensor tensorFromBytes(std::span<const std::byte> bytes) {
    std::size_t at = 0;
    return readTensor(bytes, at);
}

void appendParams(std::vector<std::byte>& out, const ParamMap& params) {
    putU64(out, params.size());
    for (const auto& [name, tensor] : params) {
        putU64(out, name.size());
        putRaw(out, name.data(), name.size());
        appendTensor(out, tensor);
    }
}

ParamMap readParams(std::span<const std::byte> bytes, std::size_t& at) {
    ParamMap params;
    const std::uint64_t count = getU64(bytes, at);
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t length = getU64(bytes, at);
        if (length > 4096 || bytes.size() - at < length) throw std::runtime_error("truncated parameter name");
        std::string name(reinterpret_cast<const char*>(bytes.data() + at), length);
        at += length;
        params[name] = readTensor(bytes, at);
    }
    return params;
}

}  // namespace mario::exec
