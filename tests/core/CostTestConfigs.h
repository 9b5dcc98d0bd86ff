#pragma once
// Configs the cost-model tests share: bundled presets by name, and a tiny GPT on a made-up
// accelerator whose round numbers make every expected value workable by hand.
#include <gtest/gtest.h>

#include <string>

#include "core/io/PresetLibrary.h"
#include "core/model/Config.h"

namespace mario::testing {

inline Config presetConfig(const std::string& model, const std::string& hardware, int pp, int dp = 1, int tp = 1) {
    PresetLibrary presets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    Config c;
    auto m = presets.model(model);
    auto h = presets.hardware(hardware);
    EXPECT_TRUE(m.ok() && h.ok());
    if (m) c.model = *m;
    if (h) c.hardware = *h;
    c.parallel.pp = pp;
    c.parallel.dp = dp;
    c.parallel.tp = tp;
    return c;
}

// s = 128, b = 2, h = 64, a = 4 heads, ffn 4h, vocab 1000, 4 layers, tied embeddings, on an
// accelerator of 100 TFLOP/s and 1000 GB/s whose kernels all run at their datasheet rate
// (efficiencies 1, no wave quantisation, no launch cost) issued by a host that costs nothing
// (host_op_us 0: host_issue_test sets its own): 100 GB/s NVLink, 10 GB/s network, 0.01 ms per
// message, 8 GPUs a node.
inline Config tinyGpt() {
    Config c;
    c.model = {"tiny", 4, 64, 4, 0, 0, 1000, 128, false, true};
    HardwareConfig& hw = c.hardware;
    hw.name = "hw";
    hw.peak_tflops = 100;
    hw.memory_gb = 16;
    hw.hbm_gb_per_s = 1000;
    hw.intra_node_gb_per_s = 100;
    hw.inter_node_gb_per_s = 10;
    hw.link_latency_ms = 0.01;
    hw.gpus_per_node = 8;
    hw.sm_count = 0;
    hw.gemm_efficiency = hw.flash_forward_efficiency = hw.flash_backward_efficiency = 1;
    hw.hbm_efficiency = hw.nvlink_efficiency = hw.network_efficiency = 1;
    hw.kernel_overhead_us = 0;
    c.parallel.pp = 2;
    c.parallel.micro_batch_size = 2;
    c.training.host_op_us = 0;
    // Sends beside compute, so that a stage's times are its own kernels; the tests of blocking
    // sends (host_issue_test.cpp) turn this off.
    c.training.overlap_p2p_comm = true;
    return c;
}

}  // namespace mario::testing
