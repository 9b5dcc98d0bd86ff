// mario-executor calibrate (issue 40, item 6): a CPU preset it fits from single kernels predicts,
// through core's analytical model, the block time `mario-executor profile` measures on the same
// machine within 10%, forward and backward separately. Two measurements are compared, so both
// run as a run's device thread runs (one intra-op and one BLAS thread, warm-up, median of
// repeats), each side the middle of five taken in turn with the other's, and a comparison outside
// the band is measured again (a busy machine) rather than judged with a wider band; on a machine busier than its cores throughout, the test is skipped
// with the measurements rather than judged on noise.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cost/AnalyticalCostModel.h"
#include "core/io/PresetLibrary.h"
#include "core/io/TextFile.h"
#include "core/util/Median.h"
#include "executor/CalibrationCheck.h"
#include "executor/CalibrationFit.h"
#include "executor/Calibrator.h"
#include "executor/Profiler.h"
#include "tests/common/ScratchDir.h"
#include "tests/executor/RunCli.h"

namespace {

using mario::exec::CalibrationFit;
using mario::exec::GemmSample;
using mario::exec::StreamSample;

constexpr double kTolerance = 0.10;  // issue 40's bar for a calibrated CPU preset
// One comparison is the middle of kRounds calibrations and kRounds profiles taken in turn
// (calibrate, profile, calibrate, ...), so that a burst of another process's work, or a machine
// whose load moves between the two, slows both sides alike or one round only: compared one
// calibration against one profile taken seconds apart, the forward at hidden 512 ranged from
// -33% to +51% within two minutes on the 2-core CI machine at load 1.3-3.5, where each product
// timed inside the block and alone in thread CPU time agreed within 4.4% (1% in total) on both builds
// (docs/calibration.md#measuring-both-sides-in-turn). A miss is measured again after a pause,
// never judged with a wider band.
constexpr int kRounds = 5;
constexpr int kAttempts = 3;
constexpr auto kPause = std::chrono::seconds(3);

struct Comparison {
    std::vector<double> predicted_forward, measured_forward, predicted_backward, measured_backward;
    static double middle(const std::vector<double>& v) { return v.empty() ? 0 : mario::median(v); }
    double forwardError() const { return middle(predicted_forward) / middle(measured_forward) - 1; }
    double backwardError() const { return middle(predicted_backward) / middle(measured_backward) - 1; }
    bool within() const { return std::abs(forwardError()) <= kTolerance && std::abs(backwardError()) <= kTolerance; }
    std::string text() const {
        std::ostringstream out;
        out << "forward " << middle(predicted_forward) << " ms predicted, " << middle(measured_forward) << " measured ("
            << 100 * forwardError() << "%); backward " << middle(predicted_backward) << " predicted, "
            << middle(measured_backward) << " measured (" << 100 * backwardError() << "%); rounds (predicted/measured "
            << "forward, backward):";
        for (std::size_t i = 0; i < measured_forward.size(); ++i)
            out << " " << predicted_forward[i] << "/" << measured_forward[i] << ", " << predicted_backward[i] << "/"
                << measured_backward[i] << ";";
        return out.str();
    }
};

// Calibrates with --quick at the block's sizes and predicts one block through the analytical
// model, then measures it with the profiler (the slope of stages of 1..3 blocks, i.e. one
// block's time), kRounds times in turn; the middle of each side is compared.
Comparison compareBlock(const mario::exec::ModelSpec& spec, int microBatch) {
    Comparison c;
    for (int round = 0; round < kRounds; ++round) {
        mario::exec::CalibrationOptions calibrate;
        calibrate.model = spec;
        calibrate.micro_batch_size = microBatch;
        calibrate.quick = true;
        auto preset = mario::exec::calibrateDevice(calibrate);
        EXPECT_TRUE(preset.ok()) << preset.error().message;
        if (!preset) return {};
        auto predicted = mario::exec::predictBlock(spec, microBatch, preset->hardware);
        EXPECT_TRUE(predicted.ok()) << predicted.error().message;
        if (!predicted) return {};

        mario::exec::ProfileOptions profile;
        profile.model = spec;
        profile.micro_batch_size = microBatch;
        profile.max_blocks = 3;
        profile.repeats = 7;
        auto measured = mario::exec::profileModel(profile);
        EXPECT_TRUE(measured.ok()) << measured.error().message;
        if (!measured) return {};
        c.predicted_forward.push_back(predicted->forward_ms);
        c.predicted_backward.push_back(predicted->backwardMs());
        c.measured_forward.push_back(measured->forward.a);
        c.measured_backward.push_back(measured->backward.a);
    }
    return c;
}

}  // namespace

// Whether the machine had more runnable work than cores while an attempt measured: the 1-minute
// load average over the cores (getloadavg). Two timings taken then are not comparable (on the
// 2-core CI machine at load 5 to 8 one block's forward ranged from 7.2 to 20.7 ms).
bool machineBusy() {
    double load[1] = {0};
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return getloadavg(load, 1) == 1 && load[0] > double(cores);
}

// Issue 40's 10% on a small block (docs/calibration.md#how-well-it-predicts has the tables;
// MARIO_CALIBRATION_BLOCK names another block), on Debian's LibTorch 1.13 and PyTorch 2.x alike.
TEST(Calibration, CpuPresetPredictsTheExecutorsBlockWithinTenPercent) {
    const char* env = std::getenv("MARIO_CALIBRATION_BLOCK");  // the benchmark table's other sizes
    auto spec = mario::exec::parseModelSpec(env ? env : "layers=3,hidden=512,heads=4,seq=128,vocab=64");
    ASSERT_TRUE(spec.ok());
    std::string attempts;
    bool quietAttempt = false;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        const bool busyBefore = machineBusy();
        const Comparison c = compareBlock(*spec, 1);
        const bool busy = busyBefore || machineBusy();
        ASSERT_EQ(c.measured_forward.size(), std::size_t(kRounds));
        attempts += "\n  attempt " + std::to_string(attempt) + (busy ? " (machine busy)" : "") + ": " + c.text();
        if (c.within()) {
            std::cout << "calibrated CPU block:" << attempts << std::endl;
            return;
        }
        quietAttempt = quietAttempt || !busy;
        std::this_thread::sleep_for(kPause);
    }
    // A miss counts when it was measured on a quiet machine; on one busy throughout, the two
    // timings say nothing, and the test says so instead of passing or failing on noise.
    if (!quietAttempt) GTEST_SKIP() << "the machine was busier than its cores in every attempt:" << attempts;
    FAIL() << "the calibrated preset missed the measured block by more than 10%:" << attempts;
}

// The fits reproduce what they were given, through the model's own formulas: the model's total
// over the fitted kernels is the measured total, and a machine twice as slow fits half the rate.
TEST(Calibration, FitsMatchTheMeasuredTotals) {
    mario::HardwareConfig start;
    start.kernel_overhead_us = 2;
    std::vector<GemmSample> sweep{{256, 256, 256, 1, 0.9}, {256, 1024, 256, 1, 3.1}, {1024, 256, 256, 1, 3.3}};
    std::vector<StreamSample> streams{{"a", 1e6, 2e6, 0.4, 0.9, 0}, {"b", 4e6, 8e6, 2.0, 3.5, 0}};
    CalibrationFit fit(start);
    fit.fitStreaming(10, streams);
    fit.fitGemm(sweep);
    double model = 0, measured = 0;
    for (const GemmSample& g : sweep) model += fit.modelMs(g), measured += g.ms;
    EXPECT_NEAR(model, measured, 1e-9 * measured);
    double streamModel = 0, streamMeasured = 0;
    for (const StreamSample& s : streams)
        streamModel += fit.modelForwardMs(s) + fit.modelBackwardMs(s), streamMeasured += s.forward_ms + s.backward_ms;
    EXPECT_NEAR(streamModel, streamMeasured, 1e-9 * streamMeasured);
    // By hand: 5 MB forward and 10 MB backward over 6.8 ms less four kernels' 2 µs.
    const double rate = (1e6 * 3 + 4e6 * 3) / ((0.4 + 0.9 + 2.0 + 3.5 - 4 * 0.002) * 1e6);
    EXPECT_NEAR(fit.hardware().elementwise_gb_per_s, rate, 1e-9 * rate);

    std::vector<GemmSample> slower = sweep;
    for (GemmSample& g : slower) g.ms = 2 * g.ms - start.kernel_overhead_us * 1e-3;  // compute part doubled
    CalibrationFit slow(start);
    slow.fitStreaming(10, streams);
    slow.fitGemm(slower);
    const auto rateOf = [](const mario::HardwareConfig& h) { return h.peak_tflops * h.gemm_efficiency; };
    EXPECT_NEAR(rateOf(slow.hardware()), rateOf(fit.hardware()) / 2, 1e-9 * rateOf(fit.hardware()));
    EXPECT_LE(fit.hardware().gemm_efficiency, 1.0);
}

// Each product role fits its own rate from the products timed in its layout, by hand: one shape
// measured forward in 1 ms, as a data gradient in 1.1 ms and as a weight gradient in 1.25 ms on a
// machine whose model has no memory roofline or launch cost to speak of. The fastest product sets
// the peak, so the forward runs at 1 and the gradients at 1/1.1 and 1/1.25 of it; each role's
// model total is its measured total.
TEST(Calibration, FitsARatePerProductRole) {
    mario::HardwareConfig start;
    start.kernel_overhead_us = 0;
    start.hbm_gb_per_s = 1e9;
    start.sm_count = 0;
    using mario::GemmRole;
    std::vector<GemmSample> sweep{{512, 256, 128, 1, 1.0, 0, true, GemmRole::Forward},
                                  {512, 256, 128, 1, 1.1, 0, true, GemmRole::InputGradient},
                                  {512, 256, 128, 1, 1.25, 0, true, GemmRole::WeightGradient},
                                  {512, 512, 512, 1, 9.0, 0, false, GemmRole::InputGradient}};  // grid: not fitted
    CalibrationFit fit(start);
    fit.fitGemm(sweep);
    const mario::HardwareConfig& h = fit.hardware();
    EXPECT_NEAR(h.peak_tflops, 2.0 * 512 * 256 * 128 / 1e9, 1e-12);
    EXPECT_NEAR(h.gemm_efficiency, 1.0, 1e-9);
    EXPECT_NEAR(h.gemm_input_grad_efficiency, 1 / 1.1, 1e-9);
    EXPECT_NEAR(h.gemm_weight_grad_efficiency, 1 / 1.25, 1e-9);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(fit.modelMs(sweep[i]), sweep[i].ms, 1e-9) << i;
    // A sweep of forward products only (a preset before roles) leaves the roles' rates unset.
    CalibrationFit forwardOnly(start);
    forwardOnly.fitGemm({sweep[0]});
    EXPECT_EQ(forwardOnly.hardware().gemm_input_grad_efficiency, 0);
    EXPECT_EQ(forwardOnly.hardware().gemm_weight_grad_efficiency, 0);
}

// Element-wise kernels fit their own rate, each counted as often as a block runs it; the layout
// copy fits the share of the copy bandwidth the products' traffic and copies stream at.
TEST(Calibration, ElementwiseAndCopyRatesAreFittedApart) {
    mario::HardwareConfig start;
    start.kernel_overhead_us = 0;
    std::vector<StreamSample> streams{{"norm", 1e6, 1.5e6, 0.5, 0.5, 0, 2},
                                      {"gelu", 4e6, 6e6, 6.0, 7.0, 0, 1},
                                      {"merge", 2e6, 2e6, 0.1, 0.1, 0, 1, true}};
    CalibrationFit fit(start);
    fit.fitStreaming(40, streams);
    // By hand: element-wise 2 × 2.5 MB + 10 MB over 2 × 1 ms + 13 ms = 1 GB/s of the model's bytes;
    // the copy 4 MB in 0.2 ms = 20 GB/s, half of the 40 GB/s large copy.
    EXPECT_NEAR(fit.hardware().elementwise_gb_per_s, 1.0, 1e-9);
    EXPECT_NEAR(fit.hardware().hbm_gb_per_s, 40, 1e-9);
    EXPECT_NEAR(fit.hardware().hbm_efficiency, 0.5, 1e-9);
    EXPECT_NEAR(fit.modelForwardMs(streams[1]), 4.0, 1e-9);  // GELU's forward at 1 GB/s
    EXPECT_NEAR(fit.modelForwardMs(streams[2]), 0.1, 1e-9);  // the copy at 20 GB/s
    // A copy faster than the large one raises the bandwidth instead of an efficiency above 1.
    streams[2].forward_ms = streams[2].backward_ms = 0.04;
    CalibrationFit fast(start);
    fast.fitStreaming(40, streams);
    EXPECT_NEAR(fast.hardware().hbm_gb_per_s, 50, 1e-9);
    EXPECT_EQ(fast.hardware().hbm_efficiency, 1.0);
}

// On a GPU the block's layout copy is launch-bound (an H100's: 44 µs beside a 9.8 µs kernel
// overhead): read as a streaming rate it priced the attention's batched products 4x too slow.
// A copy shorter than 10 kernel overheads leaves the large copy's rate; and where the products
// are memory-bound in the model at any peak, the peak stays the fastest product measured.
TEST(Calibration, ALaunchBoundCopyAndAMemoryBoundModelFitNothingAbsurd) {
    mario::HardwareConfig start;
    start.kernel_overhead_us = 10;
    std::vector<StreamSample> streams{{"gelu", 4e6, 6e6, 6.0, 7.0, 0, 1},
                                      {"merge", 2e6, 2e6, 0.05, 0.05, 0, 1, true}};  // 5 overheads
    CalibrationFit gpu(start);
    gpu.fitStreaming(3000, streams);
    EXPECT_EQ(gpu.hardware().hbm_gb_per_s, 3000);
    EXPECT_EQ(gpu.hardware().hbm_efficiency, 1.0);
    // The same copy 20 overheads long counts: 4 MB in 0.4 ms less 2 × 10 µs = 10.53 GB/s.
    streams[1].forward_ms = streams[1].backward_ms = 0.2;
    CalibrationFit slow(start);
    slow.fitStreaming(3000, streams);
    EXPECT_NEAR(slow.hardware().hbm_gb_per_s * slow.hardware().hbm_efficiency, 4e6 / (0.38 * 1e6), 1e-6);

    // One 1024³ product in 1 ms (2.147 TFLOP/s) on an HBM of 1 GB/s: the model's memory roofline
    // alone is far above 1 ms, so no peak reaches the measured time.
    mario::HardwareConfig starved = start;
    starved.hbm_gb_per_s = 1;
    CalibrationFit fit(starved);
    fit.fitGemm({{1024, 1024, 1024, 1, 1.0, 0, true}});
    EXPECT_NEAR(fit.hardware().peak_tflops, 2.0 * 1024 * 1024 * 1024 / 1e9, 1e-9);
    EXPECT_EQ(fit.hardware().gemm_efficiency, 1.0);
}

// The executor's autograd adds each weight gradient into .grad as a kernel of its own (Megatron-LM,
// which core describes, does it inside the GEMM): predictBlock charges core's block plus one stream
// per weight, and calibrate fits its rate from the accumulations it times, which have no forward.
TEST(Calibration, TheWeightGradientsAccumulationIsChargedAndFitted) {
    mario::HardwareConfig hw;
    hw.name = "by-hand";
    hw.peak_tflops = 1;
    hw.hbm_gb_per_s = 10;
    hw.hbm_efficiency = 1;
    hw.elementwise_gb_per_s = 1;
    hw.kernel_overhead_us = 2;
    hw.sm_count = 0;
    hw.memory_gb = 80;
    auto spec = mario::exec::parseModelSpec("layers=1,hidden=64,heads=2,seq=32,vocab=64");
    ASSERT_TRUE(spec.ok());
    auto core = mario::AnalyticalCostModel::create(mario::exec::executorBlockConfig(*spec, 1, hw));
    ASSERT_TRUE(core.ok());
    const mario::KernelTimes block = mario::exec::predictBlock(*spec, 1, hw).value();
    // By hand: twelve weights of a GPT block of hidden 64 (QKV 192x64, projection 64x64, fc1 256x64,
    // fc2 64x256, their biases 192, 64, 256, 64, two LayerNorms' 64 and 64), each read twice and
    // written once in bf16 (6 bytes an element) at 10 GB/s, plus 2 us a kernel.
    const double h = 64, elements = 12 * h * h + 9 * h + 4 * h;
    const double byHand = 6 * elements / 10e6 + 12 * 0.002;
    EXPECT_NEAR(block.weight_grad_ms - core->kernels().block().weight_grad_ms, byHand, 1e-12);
    EXPECT_EQ(block.forward_ms, core->kernels().block().forward_ms);
    EXPECT_EQ(block.input_grad_ms, core->kernels().block().input_grad_ms);

    // An accumulation sample counts toward the HBM rate though it has no forward: 6 MB in 2 ms less
    // one 2 us overhead, beside a layout copy of 2 MB in 0.4 ms each way, time-weighted: 10 MB of
    // model bytes in 2.8 ms less three overheads.
    std::vector<StreamSample> streams{{"merge", 2e6, 2e6, 0.4, 0.4, 0, 1, true},
                                      {"grad_accumulation 1000x1000", 0, 6e6, 0, 2.0, 0, 1, true}};
    CalibrationFit fit(hw);
    fit.fitStreaming(40, streams);
    EXPECT_NEAR(fit.hardware().hbm_gb_per_s * fit.hardware().hbm_efficiency, 10e6 / ((2.8 - 3 * 0.002) * 1e6), 1e-9);
}

// What a user does: calibrate, put the preset in a presets folder, name it in a config.
TEST(Calibration, CliWritesAPresetAConfigCanName) {
    const mario::test::ScratchDir dir("calibrate");
    std::filesystem::create_directories(dir.path() / "hardware");
    const std::string path = dir.file("hardware/my-cpu.json");
    int code = 0;
    const std::string out = mario::test::runExecutorCli(
        "calibrate --quick --model layers=1,hidden=32,heads=2,seq=32 --name my-cpu -o " + path, code);
    ASSERT_EQ(code, 0) << out;
    const auto summary = nlohmann::json::parse(out.substr(out.rfind('{')));
    EXPECT_EQ(summary["name"], "my-cpu");
    auto preset = mario::PresetLibrary(dir.path().string()).hardware("my-cpu");
    ASSERT_TRUE(preset.ok()) << preset.error().message;
    EXPECT_GT(preset->peak_tflops, 0);
    EXPECT_EQ(preset->sm_count, 0);  // a CPU has no waves of SMs
    auto text = mario::readTextFile(path);
    ASSERT_TRUE(text.ok());
    const auto document = nlohmann::json::parse(*text);
    // Provenance: machine, LibTorch, dtype, threads, repeats and their spread.
    for (const char* word : {"cores", "LibTorch", "float64", "intra-op thread", "median of", "spread"})
        EXPECT_NE(document["notes"].get<std::string>().find(word), std::string::npos) << word;
    EXPECT_FALSE(document["source"]["gemms"].empty());
    auto spec = mario::exec::parseModelSpec("layers=4,hidden=32,heads=2,seq=32");
    EXPECT_TRUE(mario::exec::predictBlock(*spec, 1, *preset).ok());
}

TEST(Calibration, BadArgumentsAreOneLine) {
    const mario::test::ScratchDir dir("calibrate_bad");
    for (const std::string& args :
         {std::string("calibrate --quick"), std::string("calibrate --device tpu -o x.json"),
          "calibrate --quick --model layers=1,hidden=32,heads=2,seq=32 -o " + dir.path().string(),
          std::string("calibrate --repeats 0 -o x.json"), std::string("calibrate --links-from no-such-gpu -o x.json"),
          std::string("calibrate --quick --check-against h100,no-such-gpu -o x.json")}) {
        int code = 0;
        const std::string out = mario::test::runExecutorCli(args, code);
        EXPECT_EQ(code, 2) << args << ": " << out;
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << args << ": " << out;
        EXPECT_EQ(out.rfind("mario-executor calibrate: ", 0), 0u) << out;
    }
}

// --check as a user runs it: the preset is written, then one block is measured and predicted by
// the new preset and by a bundled one. Each prediction must be what core's model gives for the
// preset as it reads back from disk (the calibrated one) or from the presets folder (a100), and
// each error must be the ratio of the numbers printed beside it.
TEST(Calibration, CheckComparesTheBlockWithEveryPreset) {
    const mario::test::ScratchDir dir("calibrate_check");
    std::filesystem::create_directories(dir.path() / "hardware");
    const std::string path = dir.file("hardware/my-cpu.json");
    const std::string model = "layers=3,hidden=64,heads=2,seq=32,vocab=64";
    int code = 0;
    const std::string out = mario::test::runExecutorCli(
        "calibrate --quick --model " + model + " --name my-cpu --check-against a100-80g -o " + path, code);
    ASSERT_EQ(code, 0) << out;
    const std::string last = out.substr(out.rfind('\n', out.size() - 2) + 1);
    const auto summary = nlohmann::json::parse(last);
    ASSERT_TRUE(summary.contains("check")) << out;
    const auto& check = summary["check"];
    const double forward = check["measured"]["forward_ms"], backward = check["measured"]["backward_ms"];
    EXPECT_GT(forward, 0);
    EXPECT_GT(backward, 0);
    ASSERT_EQ(check["predicted"].size(), 2u);
    auto spec = mario::exec::parseModelSpec(model);
    auto mine = mario::PresetLibrary(dir.path().string()).hardware("my-cpu");
    ASSERT_TRUE(mine.ok()) << mine.error().message;
    auto bundled = mario::PresetLibrary::locate("").value().hardware("a100-80g");
    ASSERT_TRUE(bundled.ok());
    const mario::HardwareConfig* presets[] = {&*mine, &*bundled};
    for (int i = 0; i < 2; ++i) {
        const auto& row = check["predicted"][i];
        const mario::KernelTimes block = mario::exec::predictBlock(*spec, 1, *presets[i]).value();
        EXPECT_EQ(row["preset"], presets[i]->name);
        EXPECT_NEAR(row["forward_ms"].get<double>(), block.forward_ms, 1e-9 * block.forward_ms);
        EXPECT_NEAR(row["backward_ms"].get<double>(), block.backwardMs(), 1e-9 * block.backwardMs());
        EXPECT_NEAR(row["forward_error"].get<double>(), block.forward_ms / forward - 1, 1e-9);
        EXPECT_NEAR(row["backward_error"].get<double>(), block.backwardMs() / backward - 1, 1e-9);
    }
    // Two presets, two predictions: each row is its own preset's, not one number repeated.
    EXPECT_NE(check["predicted"][0]["forward_ms"].get<double>(), check["predicted"][1]["forward_ms"].get<double>());
    EXPECT_NE(check["predicted"][0]["backward_ms"].get<double>(), check["predicted"][1]["backward_ms"].get<double>());
    EXPECT_NE(out.find("check: a100-80g: forward"), std::string::npos) << out;
}

// --refit as a user runs it on a preset calibrate wrote with --check: the same measurements fitted
// by the same build give the same preset, and the block --check recorded is checked again, each
// prediction core's for the refitted preset.
TEST(Calibration, RefitFitsTheRecordedMeasurementsAgain) {
    const mario::test::ScratchDir dir("calibrate_refit");
    const std::string first = dir.file("first.json"), again = dir.file("again.json");
    const std::string model = "layers=3,hidden=64,heads=2,seq=32,vocab=64";
    int code = 0;
    std::string out = mario::test::runExecutorCli("calibrate --quick --model " + model + " --check -o " + first, code);
    ASSERT_EQ(code, 0) << out;
    const auto written = nlohmann::json::parse(*mario::readTextFile(first));
    ASSERT_TRUE(written["source"].contains("check")) << "--check keeps the measured block with the preset";
    EXPECT_EQ(written["source"]["block"]["model"], model);
    out = mario::test::runExecutorCli("calibrate --refit " + first + " --check-against h100 -o " + again, code);
    ASSERT_EQ(code, 0) << out;
    const auto refitted = nlohmann::json::parse(*mario::readTextFile(again));
    const char* fields[] = {"peak_tflops", "gemm_efficiency", "gemm_input_grad_efficiency",
                            "gemm_weight_grad_efficiency", "hbm_gb_per_s", "hbm_efficiency",
                            "elementwise_gb_per_s", "kernel_overhead_us", "flash_forward_efficiency"};
    for (const char* field : fields)
        EXPECT_NEAR(refitted[field].get<double>(), written[field].get<double>(), 1e-9 * written[field].get<double>())
            << field;
    // A preset calibrated before products carried their role: the roles follow from the order
    // calibrate measures them in (forward, data gradient, weight gradient per weight), so the same
    // measurements refit to the same rates.
    auto legacy = written;
    for (auto& g : legacy["source"]["gemms"]) g.erase("role");
    const std::string old = dir.file("legacy.json"), legacyAgain = dir.file("legacy-again.json");
    ASSERT_TRUE(mario::writeTextFile(old, legacy.dump(), "the legacy preset").ok());
    const std::string legacyOut = mario::test::runExecutorCli("calibrate --refit " + old + " -o " + legacyAgain, code);
    ASSERT_EQ(code, 0) << legacyOut;
    const auto fromLegacy = nlohmann::json::parse(*mario::readTextFile(legacyAgain));
    for (const char* field : fields)
        EXPECT_NEAR(fromLegacy[field].get<double>(), written[field].get<double>(), 1e-9 * written[field].get<double>())
            << field;
    EXPECT_NE(refitted["notes"].get<std::string>().find("Refitted"), std::string::npos);
    const auto summary = nlohmann::json::parse(out.substr(out.rfind('\n', out.size() - 2) + 1));
    const auto& check = summary["check"];
    EXPECT_EQ(check["measured"], written["source"]["check"]["measured"]);
    auto spec = mario::exec::parseModelSpec(model);
    auto preset = mario::PresetLibrary::parseHardware(refitted, "");
    ASSERT_TRUE(preset.ok());
    const mario::KernelTimes block = mario::exec::predictBlock(*spec, 1, *preset).value();
    EXPECT_NEAR(check["predicted"][0]["forward_ms"].get<double>(), block.forward_ms, 1e-9 * block.forward_ms);
    EXPECT_EQ(check["predicted"][1]["preset"], "h100");
    // Not a calibrated preset, or one without its block's sizes: one line, exit 2.
    out = mario::test::runExecutorCli("calibrate --refit " + std::string(MARIO_SOURCE_DIR) +
                                          "/profiles/hardware/h100.json -o " + dir.file("x.json"),
                                      code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("not a calibrated preset"), std::string::npos) << out;
}

// The H100 lease's calibration (tests/bench/data/h100-2026-11-28), refitted by this build and
// checked against the block measured there: forward and backward within issue 44's 5% (+4.5% and
// +3.0% on 2026-11-28; the backward was -8.1% before the check charged autograd's accumulation of
// each weight gradient into .grad: docs/gpu.md). A cost-model change that moves the GPU
// calibration shows here without a GPU.
TEST(Calibration, TheH100LeasesPresetPredictsItsMeasuredBlock) {
    const mario::test::ScratchDir dir("calibrate_h100");
    int code = 0;
    const std::string out = mario::test::runExecutorCli(
        "calibrate --refit " + std::string(MARIO_SOURCE_DIR) +
            "/tests/bench/data/h100-2026-11-28/gpu-calibrated.h100.json -o " + dir.file("h100.json"),
        code);
    ASSERT_EQ(code, 0) << out;
    const auto summary = nlohmann::json::parse(out.substr(out.rfind('\n', out.size() - 2) + 1));
    const auto& row = summary["check"]["predicted"][0];
    EXPECT_LE(std::abs(row["forward_error"].get<double>()), 0.05) << out;
    EXPECT_LE(std::abs(row["backward_error"].get<double>()), 0.05) << out;
}
