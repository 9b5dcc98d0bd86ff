// The values the CLI and the window both word: memory fit, the tuner's verdict and the
// simulation error. Each is checked on hand-made inputs whose answer is plain.
#include <gtest/gtest.h>

#include "core/session/Fidelity.h"
#include "core/sim/MemoryFit.h"
#include "core/tune/TuneVerdict.h"

namespace mario {
namespace {

SimResult peaks(std::vector<double> bytes) {
    SimResult result;
    for (std::size_t d = 0; d < bytes.size(); ++d) {
        DeviceStats device;
        device.index = static_cast<int>(d);
        device.peak_bytes = bytes[d];
        result.devices.push_back(device);
    }
    return result;
}

TEST(MemoryFit, CountsTheDevicesOverTheLimitAndNamesTheFirstFullest) {
    const MemoryFit fit = memoryFit(peaks({5, 9, 9, 8}), 8.0);
    EXPECT_EQ(fit.devices, 4);
    EXPECT_EQ(fit.devices_over, 2);  // 8 is at the limit, not over it
    EXPECT_DOUBLE_EQ(fit.highest_peak_bytes, 9);
    EXPECT_EQ(fit.fullest_device, 1);
    EXPECT_FALSE(fit.fits());
    EXPECT_TRUE(memoryFit(peaks({5, 9}), 9.0).fits());
    EXPECT_TRUE(memoryFit(peaks({5, 9}), std::nullopt).fits());  // no limit, nothing is over
    EXPECT_EQ(memoryFit(peaks({}), 1.0).highest_peak_bytes, 0);
}

// Peaks 5, 9 and 12 against a limit of 10 and a card of 8: the limit alone judges when it is
// set (one device over, though two exceed the card); without it the card does (two over);
// with neither nothing is judged and everything fits.
TEST(MemoryFit, JudgesByTheLimitElseByTheCardAndSaysWhich) {
    const SimResult result = peaks({5, 9, 12});
    const MemoryFit byLimit = memoryFit(result, 10.0, 8.0);
    EXPECT_EQ(byLimit.basis, MemoryFit::Basis::Limit);
    EXPECT_EQ(byLimit.budget_bytes, 10.0);
    EXPECT_EQ(byLimit.devices_over, 1);
    EXPECT_FALSE(byLimit.isOver(result.devices[1]));
    const MemoryFit byCard = memoryFit(result, std::nullopt, 8.0);
    EXPECT_EQ(byCard.basis, MemoryFit::Basis::Card);
    EXPECT_EQ(byCard.budget_bytes, 8.0);
    EXPECT_EQ(byCard.devices_over, 2);
    EXPECT_TRUE(byCard.isOver(result.devices[1]));
    EXPECT_EQ(byCard.fullest_device, 2);
    const MemoryFit unjudged = memoryFit(result, std::nullopt, std::nullopt);
    EXPECT_EQ(unjudged.basis, MemoryFit::Basis::None);
    EXPECT_FALSE(unjudged.budget_bytes);
    EXPECT_TRUE(unjudged.fits());
    // A limit above the card is still the limit: it is what the user asked the passes to keep.
    EXPECT_EQ(memoryFit(result, 20.0, 8.0).basis, MemoryFit::Basis::Limit);
    EXPECT_TRUE(memoryFit(result, 20.0, 8.0).fits());
    EXPECT_EQ(basisName(MemoryFit::Basis::Limit), "limit");
    EXPECT_EQ(basisName(MemoryFit::Basis::Card), "card");
    EXPECT_EQ(basisName(MemoryFit::Basis::None), "none");
}

TEST(MemoryFit, APlanInfoGivesItsLimitElseItsCard) {
    const SimResult result = peaks({5, 9});
    PlanInfo info;
    info.device_memory_bytes = 8.0;
    EXPECT_EQ(memoryFit(result, info).basis, MemoryFit::Basis::Card);
    EXPECT_EQ(memoryFit(result, info).devices_over, 1);
    info.memory_limit_bytes = 9.0;
    EXPECT_EQ(memoryFit(result, info).basis, MemoryFit::Basis::Limit);
    EXPECT_TRUE(memoryFit(result, info).fits());
}

TuneOutcome outcome(bool checkpoint, int pp) {
    TuneOutcome o;
    o.candidate.pp = pp;
    o.candidate.checkpoint = checkpoint;
    o.feasible = true;
    return o;
}

TEST(TuneVerdict, SaysTheSpeedupOverTheBestWithoutCheckpointing) {
    TuneResult r;
    r.outcomes = {outcome(true, 8), outcome(false, 4)};
    r.best = 0;
    r.best_without_checkpointing = 1;
    r.speedup_over_no_checkpointing = 1.4249;
    EXPECT_EQ(tuneVerdict(r), "best: " + r.outcomes[0].candidate.label() +
                                  " — 1.42× the best configuration without "
                                  "checkpointing (" +
                                  r.outcomes[1].candidate.label() + ")");
    r.best_without_checkpointing.reset();
    EXPECT_EQ(tuneVerdict(r),
              "best: " + r.outcomes[0].candidate.label() + " — no configuration without checkpointing fits");
    r.best = 1;
    EXPECT_EQ(tuneVerdict(r), "best: " + r.outcomes[1].candidate.label() +
                                  " — without checkpointing: memory is not the bottleneck here");
}

TEST(TuneVerdict, WithoutAWinnerItSaysWhyNothingFits) {
    TuneResult r;
    EXPECT_EQ(tuneVerdict(r), "nothing fits the memory limit");
    r.cancelled = true;
    EXPECT_EQ(tuneVerdict(r), "nothing that fits was found before the search was cancelled");
    r.nothing_fits = "nothing fits: the closest needs 41 GB";
    EXPECT_EQ(tuneVerdict(r), r.nothing_fits);
}

TEST(Fidelity, TheErrorIsSignedAndRelativeToTheMeasurement) {
    EXPECT_DOUBLE_EQ(simulationError(105, 100), 0.05);
    EXPECT_DOUBLE_EQ(simulationError(95, 100), -0.05);
    EXPECT_DOUBLE_EQ(simulationError(100, 80), 0.25);  // not 0.2, which relative to the simulation would give
    EXPECT_DOUBLE_EQ(simulationError(10, 0), 0);
}

}  // namespace
}  // namespace mario
