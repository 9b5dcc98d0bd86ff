#include "executor/RunMemoryEstimate.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/schedule/PipelineTopology.h"
#include "core/util/HumanBytes.h"
#include "executor/StageSlices.h"

namespace mario::exec {
namespace {

bool isLlama(const ModelSpec& spec) { return spec.flavor == "llama"; }

// llamaFfnSize in 64 bits: its int arithmetic overflows past hidden 2^28, which the parser admits.
double ffnWidth(const ModelSpec& spec) {
    const long long width = 2 * (4 * static_cast<long long>(spec.hidden)) / 3;
    return static_cast<double>((width + 7) / 8 * 8);
}

// GptModel.cpp's init: GPT-2 blocks hold qkv (3h²), proj (h²) and the MLP (8h²) with biases and
// two layer norms; LLaMA blocks four h×h attention matrices, three h×f MLP matrices, two norms.
double blockParameters(const ModelSpec& spec) {
    const double h = spec.hidden, f = ffnWidth(spec);
    return isLlama(spec) ? 4 * h * h + 3 * h * f + 2 * h : 12 * h * h + 13 * h;
}

// Token embedding (and GPT's learned positions); final norm and LM head (GPT's with biases).
double embeddingParameters(const ModelSpec& spec) {
    return double(spec.vocab) * spec.hidden + (isLlama(spec) ? 0.0 : double(spec.seq) * spec.hidden);
}
double headParameters(const ModelSpec& spec) {
    const double h = spec.hidden, v = spec.vocab;
    return isLlama(spec) ? h + v * h : 2 * h + v * h + v;
}

// The slice's largest single tensor: the optimizer's temporaries are of one tensor at a time.
double largestTensor(const ModelSpec& spec, const LayerSlice& slice) {
    const double h = spec.hidden, v = spec.vocab;
    double largest = 0;
    if (slice.end > slice.begin) largest = isLlama(spec) ? h * ffnWidth(spec) : 4 * h * h;
    if (slice.embedding || slice.head) largest = std::max(largest, v * h);
    if (slice.embedding && !isLlama(spec)) largest = std::max(largest, double(spec.seq) * h);
    return largest;
}

// What LibTorch holds besides the numbers, measured with Debian's LibTorch 1.13 on the CPU (the
// resident memory a model of 20000 blocks of hidden 8 adds): about 640 bytes per tensor (its
// TensorImpl, storage, autograd metadata, the ParamMap entry, the allocator's rounding) and about
// 50 kB per block of a micro-batch's graph (the autograd nodes and saved-variable records of a
// block's 40-odd operations). Host memory on either backend. They dominate models of many small
// blocks: those 20000 blocks hold 140 MB of weights in 290 MB, and a forward 420 MB of
// activations in 1.4 GB.
constexpr double kTensorBytes = 640;
constexpr double kBlockGraphBytes = 50e3;

double sliceTensors(const ModelSpec& spec, const LayerSlice& slice) {
    const bool llama = isLlama(spec);
    return std::max(0, slice.end - slice.begin) * (llama ? 9 : 12) + (slice.embedding ? (llama ? 1 : 2) : 0) +
           (slice.head ? (llama ? 2 : 4) : 0);
}

// What one micro-batch of the run keeps of a stage (ModelSpec, rows B, dtype bytes).
struct SlotBytes {
    const ModelSpec& spec;
    double rows;
    double dt;

    double tokens() const { return rows * spec.seq; }
    double hidden() const { return tokens() * spec.hidden * dt; }  // one [B, seq, hidden] tensor
    // The head keeps the final norm's input and output (LLaMA's RMSNorm also its float64 input
    // and normalised value) and log-softmax's [B·seq, vocab] output, which the loss backs through.
    double head() const {
        const double extra = isLlama(spec) ? hidden() + (dt != 8 ? tokens() * spec.hidden * 8 : 0) : 0;
        return 2 * hidden() + extra + tokens() * spec.vocab * dt;
    }
    // Between F and B: every block's saved tensors, and either the head's or the hidden state
    // the stage sends on (the slot's output, which no block of the stage saves).
    double graph(const LayerSlice& slice) const {
        const double blocks = std::max(0, slice.end - slice.begin);
        return blocks * blockActivationBytes(spec, int(rows), int(dt)) + (slice.head ? head() : hidden());
    }
    // A checkpointed forward keeps only the stage's input: tokens (in the batch already) on a
    // chain's first stage, a hidden state on the others.
    double checkpoint(const LayerSlice& slice) const { return slice.embedding ? 0 : hidden(); }
    // Inside one instruction, on top of what the slots hold: the attention's scores are made
    // twice over (scaled, then masked, then soft-maxed; the backward as many gradients of them),
    // as are the head's logits, and a gradient of the stage's input and output is in flight.
    double temporaries(const LayerSlice& slice) const {
        const double t = spec.seq;
        double largest = 0;
        if (slice.end > slice.begin)
            largest = std::max(rows * spec.heads * t * t * dt + t * t, 4 * hidden() * (isLlama(spec) ? 2 : 1));
        if (slice.head) largest = std::max(largest, tokens() * spec.vocab * dt);
        return 2 * largest + 2 * hidden();
    }
};

// The most one device's live micro-batches hold, walking its program: F keeps its graph, or only
// its input when an R of it follows (docs/execution-model.md); R brings the graph back; B frees
// it, as W does after an I (the graph stays for the weights' gradients). `weigh(slice, graph)`
// says what a slot holds with its graph, or checkpointed (without).
template <class Weigh>
double programPeak(const DeviceProgram& device, const std::vector<LayerSlice>& slices, Weigh weigh) {
    std::unordered_set<std::uint64_t> recomputed;
    for (const Instruction& ins : device.program)
        if (ins.op == Op::Recompute) recomputed.insert(stageMicrobatchKey(ins));
    std::unordered_map<std::uint64_t, double> held;
    double live = 0, peak = 0;
    auto hold = [&](std::uint64_t key, double amount) {
        double& slot = held[key];
        live += amount - slot;
        slot = amount;
        peak = std::max(peak, live);
    };
    for (const Instruction& ins : device.program) {
        if (ins.stage < 0 || ins.stage >= static_cast<int>(slices.size())) continue;
        const LayerSlice& slice = slices[static_cast<std::size_t>(ins.stage)];
        const std::uint64_t key = stageMicrobatchKey(ins);
        if (ins.op == Op::Forward) hold(key, weigh(slice, !recomputed.count(key)));
        else if (ins.op == Op::Recompute) hold(key, weigh(slice, true));
        else if (ins.op == Op::Backward || ins.op == Op::BackwardWeight) hold(key, 0);
    }
    return peak;
}

std::string copies(double count) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", count);
    return std::string(" x ") + text + (count == 1 ? " copy" : " copies");
}

}  // namespace

double sliceParameters(const ModelSpec& spec, const LayerSlice& slice) {
    return std::max(0, slice.end - slice.begin) * blockParameters(spec) +
           (slice.embedding ? embeddingParameters(spec) : 0) + (slice.head ? headParameters(spec) : 0);
}

double modelParameters(const ModelSpec& spec) { return sliceParameters(spec, {0, spec.layers, true, true}); }

double blockActivationBytes(const ModelSpec& spec, int rows, int bytesPerElement) {
    // Per token, what autograd saves of GptModel.cpp's blocks for the backward. GPT-2: the
    // block's input and first norm (2 hidden), the contiguous q, k, v the attention's matmuls
    // keep (3), the merged heads (1), the residual and second norm (2), the MLP's 4h input and
    // GELU output (8): 16 hidden, and each layer norm's mean and rstd. LLaMA: 12 hidden (its two
    // RMSNorms' input, normalised value and output, q, k and v as the matmuls keep them, the
    // merged heads), the SwiGLU's four f-wide tensors, each RMSNorm's float64 rsqrt (and below
    // float64 its float64 input) and the rotation's cos and sin tables for q and for k. These are
    // the allocator's counts (`profile`'s activation bytes per block, which the tests compare).
    const double n = double(rows) * spec.seq, h = spec.hidden, t = spec.seq, dt = bytesPerElement;
    double bytes = 0;
    if (isLlama(spec)) {
        bytes = n * (12 * h + 4 * ffnWidth(spec)) * dt + 2 * n * 8;
        if (bytesPerElement != 8) bytes += 2 * n * h * 8;
        bytes += 4 * t * (h / spec.heads) * dt;
    } else {
        bytes = n * (16 * h + 4) * dt;
    }
    // The eager attention: softmax's [B, heads, seq, seq] output and the boolean causal mask.
    return bytes + double(rows) * spec.heads * t * t * dt + t * t;
}

int dtypeBytes(const std::string& dtype) {
    if (dtype == "float32") return 4;
    if (dtype == "bfloat16" || dtype == "float16") return 2;
    return 8;
}

double RunMemoryEstimate::bytes(bool host) const {
    double sum = 0;
    for (const auto& t : terms)
        if (t.host == host) sum += t.bytes;
    return sum;
}

const MemoryTerm* RunMemoryEstimate::term(const std::string& name) const {
    for (const auto& t : terms)
        if (t.name == name) return &t;
    return nullptr;
}

Result<RunMemoryEstimate> estimateRunMemory(const Plan& plan, const ExecutorOptions& options, const RunScope& scope) {
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    const ModelSpec& spec = options.model;
    const double dt = dtypeBytes(options.dtype);
    const int replicas = std::max(1, scope.replicas);
    // Pipelines whose stages this process builds: all replicas in one process, one per rank.
    const double pipelines = scope.device ? 1 : replicas;
    const SlotBytes slot{spec, double(std::max(1, plan.info.micro_batch_size)), dt};
    bool planLayersUsed = false;
    const std::vector<LayerSlice> slices = stageSlices(plan, *topology, spec.layers, planLayersUsed);
    auto here = [&](int device) { return !scope.device || *scope.device == device; };

    RunMemoryEstimate estimate;
    estimate.parameters = modelParameters(spec);
    const double model = estimate.parameters * dt;  // one copy of the model in the run's dtype
    const LayerSlice whole{0, spec.layers, true, true};
    // Parameters (and tensors) of every stage this process builds, of those it computes, and of
    // the gradient sums: REDUCE_GRAD sums a group's gradients into one more tensor (Exchange.h).
    double stageParameters = 0, computedParameters = 0, largestSlice = 0, reduceSums = 0;
    double stageTensors = 0, computedTensors = 0, sumTensors = 0;
    std::map<std::string, int> holders;
    for (const LayerSlice& slice : slices) ++holders[slice.key()];
    std::map<std::string, bool> summed;
    for (std::size_t s = 0; s < slices.size(); ++s) {
        const double p = sliceParameters(spec, slices[s]), n = sliceTensors(spec, slices[s]);
        stageParameters += p, stageTensors += n;
        largestSlice = std::max(largestSlice, p);
        if (!here(topology->deviceOf(int(s)))) continue;
        computedParameters += p, computedTensors += n;
        const std::string key = slices[s].key();
        if (holders[key] * replicas > 1 && (scope.device || !summed[key])) {
            reduceSums += p, sumTensors += n;
            summed[key] = true;
        }
    }
    // Per device: the most its micro-batches hold, the temporaries of its largest instruction, and
    // the optimizer's temporaries of one tensor: SGD's g·lr, Adam's six (m/c1, v/c2, its root,
    // + eps, the quotient, · lr live to the end of the expression).
    double activations = 0, graphs = 0, stepTemporaries = 0;
    auto graphBytes = [&](const LayerSlice& slice, bool graph) {
        return graph ? slot.graph(slice) : slot.checkpoint(slice);
    };
    auto graphRecords = [](const LayerSlice& slice, bool graph) {
        return graph ? std::max(0, slice.end - slice.begin) * kBlockGraphBytes : 0.0;
    };
    for (const DeviceProgram& device : plan.devices) {
        if (!here(device.index)) continue;
        double temporaries = 0, largest = 0;
        for (std::size_t s = 0; s < slices.size(); ++s)
            if (topology->deviceOf(int(s)) == device.index) {
                temporaries = std::max(temporaries, slot.temporaries(slices[s]));
                largest = std::max(largest, largestTensor(spec, slices[s]));
            }
        activations += pipelines * (programPeak(device, slices, graphBytes) + temporaries);
        graphs += pipelines * programPeak(device, slices, graphRecords);
        stepTemporaries += pipelines * largest * dt * (options.adam ? 6 : 1);
    }
    // The reference runs after the pipeline's workers are gone: the larger of the two counts.
    if (scope.reference) {
        activations = std::max(activations, slot.graph(whole) + slot.temporaries(whole));
        graphs = std::max(graphs, graphRecords(whole, true));
    }

    const bool hostWeights = !scope.cuda && dt == 8;  // the master copy is one more weights copy
    const double weights = stageParameters * dt * pipelines + (hostWeights ? model : 0);
    estimate.terms.push_back({"weights", weights, "weights " + humanBytes(model) + copies(weights / model), true});
    if (!hostWeights) {
        // GptModel's float64 weights, and a slice converted to the run's dtype on the host before
        // LibTorch copies it to the GPU (GptModel::sliceOn; a host-to-GPU copy that changes dtype
        // converts on the source device first).
        const double master = estimate.parameters * 8 + largestSlice * dt;
        estimate.terms.push_back({"master", master, "float64 master copy " + humanBytes(master), true});
    }
    const double snapshot = options.snapshotGradients() ? 2 : 1, moments = options.adam ? 2 : 0;
    const double gradients = (computedParameters * pipelines * snapshot + reduceSums) * dt;
    estimate.terms.push_back({"gradients", gradients, "gradients " + humanBytes(gradients), true});
    const double optimizer = moments * computedParameters * pipelines * dt + stepTemporaries;
    estimate.terms.push_back(
        {"optimizer", optimizer, (options.adam ? "Adam state " : "optimizer step ") + humanBytes(optimizer), true});
    estimate.terms.push_back({"activations", activations, "activations " + humanBytes(activations), true});
    // The reference's weights, gradients, the step's copy of them and Adam's moments.
    const double referenceCopies = scope.reference ? 3 + moments : 0;
    if (scope.reference) {
        double reference = model * referenceCopies + largestTensor(spec, whole) * dt * (options.adam ? 6 : 1);
        // A multi-process run gathers every rank's gradients and weights as bytes, then tensors.
        if (scope.device) reference += 4 * stageParameters * replicas * dt;
        estimate.terms.push_back({"reference", reference, "reference model " + humanBytes(reference), true});
    }
    // Every tensor above has its metadata, every live block its graph's records (kTensorBytes).
    const double tensors = sliceTensors(spec, whole) * (1 + referenceCopies) + stageTensors * pipelines +
                           computedTensors * pipelines * (snapshot + moments) + sumTensors;
    const double bookkeeping = tensors * kTensorBytes + graphs;
    estimate.terms.push_back(
        {"bookkeeping", bookkeeping, "LibTorch's tensor and graph records " + humanBytes(bookkeeping), true});
    // Inputs and targets, int64 [B, seq], of every micro-batch of every replica (RunSetup.h).
    const double tokens = 2 * 8 * slot.tokens() * std::max(1, plan.microbatchCount()) * replicas;
    estimate.terms.push_back({"tokens", tokens, "token batch " + humanBytes(tokens), true});
    if (scope.cuda)
        for (auto& t : estimate.terms) t.host = t.name == "master" || t.name == "bookkeeping";
    return estimate;
}

RunMemoryEstimate estimateProfileMemory(const ProfileScope& scope) {
    const ModelSpec& spec = scope.model;
    const double dt = dtypeBytes(scope.dtype);
    const SlotBytes slot{spec, double(std::max(1, scope.micro_batch_size)), dt};
    const double moments = scope.adam ? 2 : 0;
    RunMemoryEstimate estimate;
    estimate.parameters = modelParameters(spec);
    const double master = estimate.parameters * 8;
    estimate.terms.push_back({"master", master, "float64 master copy " + humanBytes(master), true});
    // Measured one slice at a time (Profiler.cpp's measure): the largest one's weights (cloned in
    // float64, then in the dtype), gradients and moments, its graph (one at a time: the backward
    // frees the forward's before the recompute makes its own), the split backward's input
    // gradient and its temporaries; the optimizer step's of one tensor.
    const LayerSlice blocks{0, scope.max_blocks, false, false};
    const LayerSlice embedding{0, 0, true, false}, head{0, 0, false, true};
    double slice = 0, activations = 0, tensors = 0;
    for (const LayerSlice& s : {blocks, embedding, head}) {
        const double p = sliceParameters(spec, s);
        slice = std::max(slice, p * (8 + dt * (2 + moments)) + largestTensor(spec, s) * dt * (scope.adam ? 6 : 1));
        activations = std::max(activations, slot.graph(s) + slot.hidden() + slot.temporaries(s));
        tensors = std::max(tensors, sliceTensors(spec, s) * (3 + moments));
    }
    estimate.terms.push_back({"weights", slice, "measured slice's weights and gradients " + humanBytes(slice), true});
    estimate.terms.push_back({"activations", activations, "activations " + humanBytes(activations), true});
    // Each neighbour: its own copy of the block slice, gradients, and a forward's graph.
    const double neighbours =
        scope.neighbours * (sliceParameters(spec, blocks) * dt * 2 + slot.graph(blocks) + slot.temporaries(blocks));
    if (scope.neighbours > 0)
        estimate.terms.push_back({"neighbours", neighbours, "busy neighbours " + humanBytes(neighbours), true});
    // The input hidden state (in float64 first), the tokens and their two slices.
    const double inputs = slot.tokens() * spec.hidden * (8 + dt) + 3 * 8 * slot.tokens();
    estimate.terms.push_back({"tokens", inputs, "inputs " + humanBytes(inputs), true});
    const double bookkeeping = (sliceTensors(spec, {0, spec.layers, true, true}) + tensors) * kTensorBytes +
                               (1 + scope.neighbours) * scope.max_blocks * kBlockGraphBytes;
    estimate.terms.push_back(
        {"bookkeeping", bookkeeping, "LibTorch's tensor and graph records " + humanBytes(bookkeeping), true});
    if (scope.cuda)
        for (auto& t : estimate.terms) t.host = t.name == "master" || t.name == "bookkeeping";
    return estimate;
}

std::optional<std::string> memoryRefusal(const RunMemoryEstimate& estimate, const std::string& model,
                                         const std::optional<MemoryLimit>& host, const std::optional<MemoryLimit>& gpu,
                                         const std::string& what) {
    // The GPU first: where both pass, its memory is the one the user must size the model for.
    const bool onGpu = std::any_of(estimate.terms.begin(), estimate.terms.end(), [](auto& t) { return !t.host; });
    for (const bool inHost : {false, true}) {
        const std::optional<MemoryLimit>& limit = inHost ? host : gpu;
        const double needed = estimate.bytes(inHost);
        if (!limit || needed <= limit->bytes) continue;
        std::vector<const MemoryTerm*> terms;
        for (const auto& t : estimate.terms)
            if (t.host == inHost && t.bytes > 0) terms.push_back(&t);
        std::stable_sort(terms.begin(), terms.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
        std::string parts;
        for (std::size_t i = 0; i < terms.size() && i < 4; ++i) parts += (i ? ", " : "") + terms[i]->detail;
        if (terms.size() > 4) parts += ", ...";
        const std::string where = !onGpu ? "" : inHost ? " of host memory" : " on the GPU";
        return "--model " + model + ": " + what + " needs about " + humanBytes(needed) + where + " (" + parts +
               "), more than the " + humanBytes(limit->bytes) + " " + limit->what;
    }
    return std::nullopt;
}

}  // namespace mario::exec
