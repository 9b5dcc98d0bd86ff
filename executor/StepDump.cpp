#include "executor/StepDump.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/TextFile.h"

namespace mario::exec {
namespace {

// The dump's files and its index entries. Row-major and little-endian whatever the host, so the
// reader needs nothing but the shape and dtype in the index. Every file is first written whole
// beside its name (".NAME.partial", through core's one writer) and the dump is renamed into
// place only once every file of it is written: a write that fails (a full disk) removes what this
// dump wrote and leaves what was in DIR before as it was, an earlier dump included, so the
// PyTorch test never reads half of one (it left a truncated file and no step.json).
class TensorFiles {
public:
    explicit TensorFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}
    TensorFiles(const TensorFiles&) = delete;
    TensorFiles& operator=(const TensorFiles&) = delete;
    ~TensorFiles() {
        std::error_code ignored;  // best effort: the write error is what gets reported
        for (std::size_t i = renamed_; i < pending_.size(); ++i) std::filesystem::remove(pending_[i].first, ignored);
    }

    // Writes `bytes` for DIR/file; throws with the writer's one line.
    void put(const std::string& file, std::string_view bytes) {
        const auto partial = dir_ / ("." + file + ".partial");
        pending_.emplace_back(partial, dir_ / file);  // before the write: a failed one may leave it
        if (auto written = writeTextFile(partial.string(), bytes, "the step dump"); !written)
            throw std::runtime_error("--dump-step: " + written.error().message);
    }

    // Every file is written: each takes its name, step.json last.
    void finish() {
        for (; renamed_ < pending_.size(); ++renamed_) {
            const auto& [partial, final] = pending_[renamed_];
            std::error_code error;
            std::filesystem::rename(partial, final, error);
            if (error) throw std::runtime_error("--dump-step: cannot write " + final.string() + ": " + error.message());
        }
    }

    // kind: "weight", "grad", "input" or "target"; `name` is the parameter's or the
    // micro-batch's ("3"); float tensors are written as float64, token ids as int64.
    void write(const std::string& kind, const std::string& name, const torch::Tensor& tensor) {
        const bool ids = tensor.scalar_type() == torch::kInt64;
        const torch::Tensor cpu = tensor.detach().to(torch::kCPU, ids ? torch::kInt64 : torch::kFloat64).contiguous();
        const std::string file = kind + "." + name + ".bin";
        std::string bytes(static_cast<std::size_t>(cpu.numel()) * 8, '\0');
        if (!bytes.empty()) std::memcpy(bytes.data(), cpu.data_ptr(), bytes.size());
        if constexpr (std::endian::native == std::endian::big)
            for (std::size_t i = 0; i < bytes.size(); i += 8)
                for (std::size_t j = 0; j < 4; ++j) std::swap(bytes[i + j], bytes[i + 7 - j]);
        put(file, bytes);
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
    // (partial, final) of every file written, in order; those from renamed_ on are still partial.
    std::vector<std::pair<std::filesystem::path, std::filesystem::path>> pending_;
    std::size_t renamed_ = 0;
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
    // The index last, renamed last: a step.json is only ever beside the files it names.
    files.put("step.json", header.dump(1) + "\n");
    files.finish();
}

}  // namespace mario::exec
