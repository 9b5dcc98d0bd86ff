// What `mario-executor run --dump-step` writes is a step another runtime can repeat and must
// match (tests/pytorch/pytorch_runtime_test.py): from the dumped weights and tokens alone, the
// whole model on one device gives the dumped loss and gradients, and the weights are those the
// step started from, not the stepped ones. Includes Torch (GptModel.h) to recompute the step.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/Executor.h"
#include "executor/GptModel.h"
#include "tests/common/ScratchDir.h"
#include "tests/common/UnitPlans.h"

namespace {

using mario::exec::GptModel;
using mario::exec::LayerSlice;
using mario::exec::ParamMap;

// One tensor of the dump from its index entry (little-endian raw, as StepDump.cpp writes it on
// the little-endian machines these tests run on).
torch::Tensor readTensor(const std::filesystem::path& dir, const nlohmann::json& entry) {
    std::ifstream in(dir / entry.at("file").get<std::string>(), std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto shape = entry.at("shape").get<std::vector<int64_t>>();
    const auto dtype = entry.at("dtype") == "int64" ? torch::kInt64 : torch::kFloat64;
    torch::Tensor tensor = torch::empty(shape, torch::TensorOptions().dtype(dtype));
    EXPECT_EQ(bytes.size(), static_cast<std::size_t>(tensor.numel()) * 8) << entry.dump();
    if (bytes.size() == static_cast<std::size_t>(tensor.numel()) * 8)
        std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
    return tensor;
}

struct Dump {
    nlohmann::json header;
    std::map<std::string, std::map<std::string, torch::Tensor>> byKind;  // kind -> name -> tensor
};

Dump readDump(const std::filesystem::path& dir) {
    Dump dump;
    std::ifstream in(dir / "step.json");
    dump.header = nlohmann::json::parse(in);
    for (const auto& entry : dump.header.at("tensors"))
        dump.byKind[entry.at("kind")][entry.at("name")] = readTensor(dir, entry);
    return dump;
}

TEST(StepDump, TheDumpAloneReproducesTheStepsLossAndEveryGradient) {
    // ZBV with the paper's passes: V placement, split backward (I then W) and recomputation,
    // two rows per micro-batch; a large learning rate, so stepped weights would be far off.
    auto plan = mario::test::makeUnitPlanWithPasses(mario::Scheme::Zbv, 2, 4, 1, "all");
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    plan->info.micro_batch_size = 2;
    const mario::test::ScratchDir dir("step_dump");
    mario::exec::ExecutorOptions options;
    options.seed = 5;
    options.lr = 0.5;
    options.dump_step_dir = dir.file("step");
    auto report = mario::exec::runPlan(*plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;

    const Dump dump = readDump(dir.file("step"));
    const auto& h = dump.header;
    EXPECT_EQ(h.at("format"), "mario-step-dump");
    EXPECT_EQ(h.at("loss").get<double>(), report->loss);
    EXPECT_EQ(h.at("microbatches"), 4);
    EXPECT_EQ(h.at("micro_batch_size"), 2);
    EXPECT_EQ(h.at("model").at("describe"), mario::exec::describe(options.model));
    ASSERT_EQ(h.at("stages").size(), plan->stages.size());
    for (std::size_t s = 0; s < plan->stages.size(); ++s)
        EXPECT_EQ(h.at("stages")[s].at("device"), plan->stages[s].device) << s;

    // The initial weights: the model the seed makes, before the step moved them by lr × g.
    const GptModel model(options.model, options.seed);
    const LayerSlice whole{0, options.model.layers, true, true};
    const ParamMap seeded = model.cloneSlice(whole);
    ASSERT_EQ(dump.byKind.at("weight").size(), seeded.size());
    ParamMap weights;
    for (const auto& [name, w] : dump.byKind.at("weight")) {
        EXPECT_TRUE(torch::equal(w, seeded.at(name))) << name;
        weights[name] = w.clone().requires_grad_(true);
    }

    // The whole model from the dump's weights and tokens, each micro-batch's loss over M.
    const auto& inputs = dump.byKind.at("input");
    const auto& targets = dump.byKind.at("target");
    ASSERT_EQ(inputs.size(), 4u);
    double loss = 0;
    for (const auto& [m, input] : inputs) {
        EXPECT_EQ(input.sizes().vec(), (std::vector<int64_t>{2, options.model.seq})) << m;
        auto part = model.forward(whole, weights, input, targets.at(m)) / 4.0;
        part.backward();
        loss += part.item<double>();
    }
    EXPECT_NEAR(loss, report->loss, 1e-12 * std::abs(loss));
    const auto& grads = dump.byKind.at("grad");
    ASSERT_EQ(grads.size(), weights.size());
    for (const auto& [name, w] : weights) {
        const torch::Tensor& g = grads.at(name);
        ASSERT_GT(w.grad().abs().max().item<double>(), 0) << name;
        const double rel = (g - w.grad()).abs().max().item<double>() / w.grad().abs().max().item<double>();
        EXPECT_LT(rel, 1e-9) << name;
    }
}

}  // namespace
