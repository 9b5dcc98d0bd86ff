#include "executor/StepDump.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

namespace mario::exec {
namespace {

// One tensor's file and its index entry. Row-major and little-endian whatever the host, so the
// reader needs nothing but the shape and dtype in the index.
class TensorFiles {
public:
    explicit TensorFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}

    // kind: "weight", "grad", "input" or "target"; `name` is the parameter's or the
    // micro-batch's ("3"); float tensors are written as float64, token ids as int64.
    void write(const std::string& kind, const std::string& name, const torch::Tensor& tensor) {
        const bool ids = tensor.scalar_type() == torch::kInt64;
        const torch::Tensor cpu = tensor.detach().to(torch::kCPU, ids ? torch::kInt64 : torch::kFloat64).contiguous();
        const std::string file = kind + "." + name + ".bin";
        std::vector<char> bytes(static_cast<std::size_t>(cpu.numel()) * 8);
        if (!bytes.empty()) std::memcpy(bytes.data(), cpu.data_ptr(), bytes.size());
        if constexpr (std::endian::native == std::endian::big)
            for (std::size_t i = 0; i < bytes.size(); i += 8)
                for (std::size_t j = 0; j < 4; ++j) std::swap(bytes[i + j], bytes[i + 7 - j]);
        std::ofstream out(dir_ / file, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out) throw std::runtime_error("--dump-step: cannot write " + (dir_ / file).string());
        index_.push_back({{"kind", kind},
                          {"name", name},
                          {"shape", cpu.sizes().vec()},
                          {"dtype", ids ? "int64" : "float64"},
                          {"file", file}});
    }

    const nlohmann::json& index() const { return index_; }

private:
    std::filesystem::path dir_;
    nlohmann::json index_ = nlohmann::json::array();
};

// The gradient of `name` as the reference check reads it: the first stage holding it. Replicas
// and Chimera's second copies hold the same reduced sum, so the first is the pipeline's.
const torch::Tensor& pipelineGradient(const std::vector<StageRuntime>& stages, const std::string& name) {
    for (const StageRuntime& st : stages)
        if (auto it = st.gradSnapshot.find(name); it != st.gradSnapshot.end()) return it->second;
    throw std::runtime_error("--dump-step: no pipeline gradient for " + name);
}

nlohmann::json modelJson(const ModelSpec& spec) {
    return {{"describe", describe(spec)}, {"layers", spec.layers}, {"hidden", spec.hidden},
            {"heads", spec.heads},        {"seq", spec.seq},       {"vocab", spec.vocab},
            {"flavor", spec.flavor}};
}

// The slices of replica 0's stages, in stage order: how the executor cut the model for this
// plan, which the other runtime must cut alike (its own stage i holds stage i's slice).
nlohmann::json stagesJson(const StepDumpInputs& step) {
    nlohmann::json out = nlohmann::json::array();
    for (int s = 0; s < step.topology.stageCount(); ++s) {
        const LayerSlice& slice = step.stages.at(static_cast<std::size_t>(s)).slice;
        out.push_back({{"index", s},
                       {"device", step.topology.deviceOf(s)},
                       {"begin", slice.begin},
                       {"end", slice.end},
                       {"embedding", slice.embedding},
                       {"head", slice.head}});
    }
    return out;
}

}  // namespace

void writeStepDump(const std::string& dir, const StepDumpInputs& step) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) throw std::runtime_error("--dump-step: cannot create " + dir + ": " + error.message());
    TensorFiles files(dir);

    // The model's master weights are never stepped (stages hold copies), so these are the
    // weights every stage started the step with.
    const LayerSlice whole{0, step.model.spec().layers, true, true};
    const ParamMap initial = step.model.cloneSlice(whole);
    for (const auto& [name, weight] : initial) files.write("weight", name, weight);
    for (const auto& [name, weight] : initial) files.write("grad", name, pipelineGradient(step.stages, name));
    for (std::size_t m = 0; m < step.batch.inputs.size(); ++m) {
        files.write("input", std::to_string(m), step.batch.inputs[m]);
        files.write("target", std::to_string(m), step.batch.targets[m]);
    }

    const nlohmann::json header = {
        {"format", "mario-step-dump"},
        {"version", 1},
        {"model", modelJson(step.model.spec())},
        {"seed", step.options.seed},
        {"dtype", step.options.dtype},
        // Per replica; the batch holds data_parallel × microbatches of them, replica-major.
        {"microbatches", step.microbatches},
        {"micro_batch_size", step.micro_batch_size},
        {"data_parallel", step.options.data_parallel},
        // As the run reports it: the mean over micro-batches of each one's mean cross-entropy.
        {"loss", step.report.loss},
        {"stages", stagesJson(step)},
        {"tensors", files.index()},
    };
    const auto path = std::filesystem::path(dir) / "step.json";
    std::ofstream out(path);
    out << header.dump(1) << "\n";
    if (!out) throw std::runtime_error("--dump-step: cannot write " + path.string());
}

}  // namespace mario::exec
