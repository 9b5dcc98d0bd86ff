#pragma once
// The assertions every reference-equality test of the executor makes: the pipelined run's loss
// and every parameter gradient equal those of the plain single-device run (float64, so the
// only differences are summation order: far below 1e-9).
#include <gtest/gtest.h>

#include "executor/Executor.h"

namespace mario::test {

// A run compared with the reference, seeded alike, with a receive timeout that ends a broken
// plan in seconds rather than hanging the suite.
inline mario::exec::ExecutorOptions referenceOptions() {
    mario::exec::ExecutorOptions options;
    options.reference = true;
    options.recv_timeout_s = 20;
    options.seed = 7;
    return options;
}

inline void expectMatchesReference(const mario::exec::RunReport& report) {
    ASSERT_TRUE(report.reference_loss.has_value());
    EXPECT_NEAR(report.loss, *report.reference_loss, 1e-9);
    EXPECT_TRUE(report.grads_match) << "first mismatch: "
                                    << (report.mismatched.empty() ? "" : report.mismatched.front());
    EXPECT_LT(report.max_grad_rel_diff, 1e-9);
}

// After several optimizer steps: the same loss, gradients and weights as the reference's steps.
inline void expectSameStepsAsReference(const mario::exec::RunReport& report) {
    ASSERT_TRUE(report.reference_loss.has_value());
    EXPECT_NEAR(report.loss, *report.reference_loss, 1e-9);
    EXPECT_TRUE(report.grads_match);
    EXPECT_LT(report.max_weight_abs_diff, 1e-9);
}

}  // namespace mario::test
