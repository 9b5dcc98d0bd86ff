// The LLaMA flavour's two formulas against hand-computed values, and the properties that make
// them what they are: RMSNorm scales to the weight's magnitude, rotary embeddings turn pairs of
// dimensions so that q·k depends only on the distance between positions. Includes Torch
// (GptModel.h), unlike the other executor tests.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "executor/GptModel.h"

namespace {

using mario::exec::applyRotary;
using mario::exec::rmsNorm;

const auto kDouble = torch::TensorOptions().dtype(torch::kFloat64);

TEST(LlamaMath, RmsNormByHand) {
    // x = (3, 4): rms = sqrt((9 + 16) / 2) = sqrt(12.5); w = (1, 2).
    auto y = rmsNorm(torch::tensor({3.0, 4.0}, kDouble), torch::tensor({1.0, 2.0}, kDouble), 0.0);
    const double rms = std::sqrt(12.5);
    EXPECT_NEAR(y[0].item<double>(), 3 / rms, 1e-15);
    EXPECT_NEAR(y[1].item<double>(), 2 * 4 / rms, 1e-15);
    // eps sits inside the root: x = (0, 0) stays 0, x = (1, 1) with eps 1 is 1/sqrt(2).
    auto z = rmsNorm(torch::tensor({1.0, 1.0}, kDouble), torch::ones({2}, kDouble), 1.0);
    EXPECT_NEAR(z[0].item<double>(), 1 / std::sqrt(2.0), 1e-15);
}

TEST(LlamaMath, RmsNormOutputHasTheWeightsMagnitude) {
    torch::manual_seed(3);
    auto x = torch::randn({2, 5, 16}, kDouble) * 7 + 1;
    auto y = rmsNorm(x, torch::full({16}, -1.7, kDouble), 1e-6);
    auto rms = y.pow(2).mean(-1).sqrt();
    EXPECT_TRUE(torch::allclose(rms, torch::full({2, 5}, 1.7, kDouble), 1e-6, 0)) << rms;
    // Normalisation is per row: scaling a row leaves it unchanged (up to eps).
    const auto ones = torch::ones({16}, kDouble);
    EXPECT_TRUE(torch::allclose(rmsNorm(x * 10, ones, 0), rmsNorm(x, ones, 0), 1e-12, 1e-12));
}

TEST(LlamaMath, RotaryOfTwoDimensionsIsARotationByThePosition) {
    // head_dim 2: one pair, angle = pos · theta^0 = pos.
    const double a = 0.3, b = -0.7;
    auto x = torch::tensor({a, b}, kDouble).repeat({1, 1, 4, 1});  // [1, 1, T = 4, 2]
    auto y = applyRotary(x, 10000.0);
    for (int p = 0; p < 4; ++p) {
        EXPECT_NEAR(y[0][0][p][0].item<double>(), a * std::cos(p) - b * std::sin(p), 1e-15) << p;
        EXPECT_NEAR(y[0][0][p][1].item<double>(), a * std::sin(p) + b * std::cos(p), 1e-15) << p;
    }
}

TEST(LlamaMath, RotaryPairsDimensionIWithIPlusHalf) {
    // head_dim 4, theta 100: pair (0, 2) turns by pos · 1, pair (1, 3) by pos · 100^(-2/4) = pos/10.
    auto x = torch::tensor({1.0, 2.0, 3.0, 4.0}, kDouble).repeat({1, 1, 3, 1});
    auto y = applyRotary(x, 100.0)[0][0][2];  // position 2
    const double c0 = std::cos(2.0), s0 = std::sin(2.0), c1 = std::cos(0.2), s1 = std::sin(0.2);
    EXPECT_NEAR(y[0].item<double>(), 1 * c0 - 3 * s0, 1e-15);
    EXPECT_NEAR(y[2].item<double>(), 3 * c0 + 1 * s0, 1e-15);
    EXPECT_NEAR(y[1].item<double>(), 2 * c1 - 4 * s1, 1e-15);
    EXPECT_NEAR(y[3].item<double>(), 4 * c1 + 2 * s1, 1e-15);
}

TEST(LlamaMath, RotaryKeepsPairNormsAndPositionZeroAndDependsOnDistanceOnly) {
    torch::manual_seed(5);
    const int64_t hd = 8, t = 6;
    auto qv = torch::randn({hd}, kDouble), kv = torch::randn({hd}, kDouble);
    auto q = applyRotary(qv.repeat({2, 3, t, 1}), 10000.0);  // [B = 2, heads = 3, T, hd]
    auto k = applyRotary(kv.repeat({2, 3, t, 1}), 10000.0);
    auto pairNorms = [&](const torch::Tensor& v) {
        return (v.slice(-1, 0, hd / 2).pow(2) + v.slice(-1, hd / 2, hd).pow(2)).sqrt();
    };
    EXPECT_TRUE(torch::allclose(pairNorms(q), pairNorms(qv).expand({2, 3, t, hd / 2}), 1e-14, 1e-14));
    EXPECT_TRUE(torch::equal(q[1][2][0], qv));
    auto dot = [&](int qp, int kp) { return torch::dot(q[0][1][qp], k[0][1][kp]).item<double>(); };
    EXPECT_NEAR(dot(3, 1), dot(5, 3), 1e-13);
    EXPECT_NEAR(dot(1, 3), dot(3, 5), 1e-13);
    EXPECT_GT(std::abs(dot(3, 1) - dot(3, 2)), 1e-6);  // yet the distance does matter
    EXPECT_THROW(applyRotary(torch::zeros({1, 1, 2, 3}, kDouble)), std::invalid_argument);
}

mario::exec::ModelSpec smallLlama() {
    auto spec = mario::exec::parseModelSpec("tiny-llama,layers=2,hidden=16,heads=2,seq=5,vocab=11");
    EXPECT_TRUE(spec.ok());
    return *spec;
}

TEST(LlamaMath, ModelHasLlamasParametersAndNoOthers) {
    const mario::exec::GptModel model(smallLlama(), 1);
    const auto params = model.cloneSlice({0, 2, true, true});
    std::set<std::string> names;
    for (const auto& [name, p] : params) names.insert(name);
    std::set<std::string> want = {"embed.tok", "final.norm.w", "head.w"};
    for (const std::string b : {"block0.", "block1."})
        for (const char* n :
             {"attn_norm.w", "attn.wq", "attn.wk", "attn.wv", "attn.wo", "mlp_norm.w", "mlp.w1", "mlp.w2", "mlp.w3"})
            want.insert(b + n);
    EXPECT_EQ(names, want);
    EXPECT_EQ(params.at("block1.mlp.w1").sizes(), (std::vector<int64_t>{48, 16}));  // int(2/3·64) = 42 -> 48
    EXPECT_EQ(params.at("block1.mlp.w2").sizes(), (std::vector<int64_t>{16, 48}));
    EXPECT_EQ(params.at("head.w").sizes(), (std::vector<int64_t>{11, 16}));
    // A slice of block 1 alone holds exactly its nine tensors.
    EXPECT_EQ(model.cloneSlice({1, 2, false, false}).size(), 9u);
}

TEST(LlamaMath, ModelIsCausal) {
    // Changing the last token changes the last position's hidden state and no earlier one.
    const mario::exec::GptModel model(smallLlama(), 2);
    const mario::exec::LayerSlice body{0, 2, true, false};
    const auto params = model.cloneSlice(body);
    auto tokens = torch::tensor({{1, 4, 2, 8, 5}}, torch::kInt64);
    auto changed = tokens.clone();
    changed[0][4] = 9;
    auto a = model.forward(body, params, tokens, {}), b = model.forward(body, params, changed, {});
    EXPECT_TRUE(torch::equal(a.slice(1, 0, 4), b.slice(1, 0, 4)));
    EXPECT_GT((a[0][4] - b[0][4]).abs().max().item<double>(), 1e-6);
}

}  // namespace
