// mario-executor's option values are read whole and in range before anything runs (issue 30:
// "--iterations 1e9" ran 1 iteration, "3abc" ran 3, "--lr nan" finished with a null loss,
// float16 on the CPU failed mid-run).
#include <gtest/gtest.h>

#include <limits>

#include "executor/OptionValues.h"

namespace mario::exec {
namespace {

TEST(OptionValues, IntegersAreWholeAndInRange) {
    EXPECT_EQ(*integerOption("--iterations", "3", 1, 10), 3);
    EXPECT_EQ(*integerOption("--iterations", "10", 1, 10), 10);
    for (const char* bad : {"1e9", "3abc", "", " 3", "3 ", "+3", "0", "11", "4.5", "99999999999999999999"})
        EXPECT_FALSE(integerOption("--iterations", bad, 1, 10).ok()) << bad;
    EXPECT_EQ(integerOption("--dp", "0", 1, 256).error().message, "--dp: expected an integer in [1, 256] (got \"0\")");
}

TEST(OptionValues, SeedsAreAnyWholeNumber) {
    EXPECT_EQ(*seedOption("--seed", "18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
    for (const char* bad : {"-1", "18446744073709551616", "7x", ""})
        EXPECT_FALSE(seedOption("--seed", bad).ok()) << bad;
}

TEST(OptionValues, NumbersAreFiniteAndInTheirInterval) {
    EXPECT_DOUBLE_EQ(*numberOption("--lr", "0.001", 0, 1000), 0.001);
    EXPECT_DOUBLE_EQ(*numberOption("--lr", "1e3", 0, 1000), 1000);
    for (const char* bad : {"nan", "inf", "-inf", "1e308", "0", "-0.1", "0.1x", ""})
        EXPECT_FALSE(numberOption("--lr", bad, 0, 1000).ok()) << bad;
}

TEST(OptionValues, Float16OnlyOnAGpu) {
    for (const char* dtype : {"float64", "float32", "bfloat16"}) EXPECT_TRUE(dtypeOption(dtype, false).ok()) << dtype;
    EXPECT_FALSE(dtypeOption("float16", false).ok());
    EXPECT_TRUE(dtypeOption("float16", true).ok());
    EXPECT_NE(dtypeOption("int8", true).error().message.find("expected float64"), std::string::npos);
}

TEST(OptionValues, DumpStepOnlyForOneStepInDouble) {
    EXPECT_TRUE(dumpStepFits(1, "float64").ok());
    EXPECT_EQ(dumpStepFits(2, "float64").error().message,
              "--dump-step writes one step: it needs --iterations 1 (got 2)");
    for (const char* dtype : {"float32", "bfloat16", "float16"})
        EXPECT_NE(dumpStepFits(1, dtype).error().message.find("it needs --dtype float64"), std::string::npos) << dtype;
}

}  // namespace
}  // namespace mario::exec
