#pragma once
// The assertions every reference-equality test of the executor makes: the pipelined run's loss
// and every parameter gradient equal those of the plain single-device run (float64, so the
// only differences are summation order: far below 1e-9).
#include <gtest/gtest.h>

#include "Executor.h"

namespace mario::test {

inline void expectMatchesReference(const mario::exec::RunReport& report) {
    ASSERT_TRUE(report.reference_loss.has_value());
    EXPECT_NEAR(report.loss, *report.reference_loss, 1e-9);
    EXPECT_TRUE(report.grads_match) << "first mismatch: " << (report.mismatched.empty() ? "" : report.mismatched.front());
    EXPECT_LT(report.max_grad_rel_diff, 1e-9);
}

}  // namespace mario::test
