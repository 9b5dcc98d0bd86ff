// The executor's capabilities line (core/io/ExecutorCapabilities.h): what the executor writes
// the window reads back field for field, reasons appear only where a capability is missing,
// and a line that is not the format fails naming the field.
#include <gtest/gtest.h>

#include <string>

#include "core/io/ExecutorCapabilities.h"

namespace mario {
namespace {

TEST(ExecutorCapabilities, RoundTripsAndOmitsReasonsOfWhatItCan) {
    ExecutorCapabilities gpu{true, 8, true, true, "0.9.0", "2.5.1", 1, "", ""};
    const std::string line = writeExecutorCapabilities(gpu);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.find("reason"), std::string::npos) << line;
    auto back = parseExecutorCapabilities(line);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_TRUE(back->cuda);
    EXPECT_EQ(back->devices, 8);
    EXPECT_TRUE(back->partition_sms);
    EXPECT_TRUE(back->nccl);
    EXPECT_EQ(back->version, "0.9.0");
    EXPECT_EQ(back->torch, "2.5.1");
    EXPECT_EQ(back->protocol, 1);
}

TEST(ExecutorCapabilities, ACpuBuildSaysWhy) {
    auto back = parseExecutorCapabilities(
        R"( {"cuda": false, "devices": 0, "partition_sms": false, "nccl": false, "version": "1",)"
        R"( "cuda_reason": "no CUDA", "partition_reason": "no GPU", "newer_field": 3} )");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_FALSE(back->cuda);
    EXPECT_EQ(back->cuda_reason, "no CUDA");
    EXPECT_EQ(back->partition_reason, "no GPU");
    EXPECT_EQ(back->protocol, 0);  // absent: an executor that did not say
}

TEST(ExecutorCapabilities, BadLinesNameTheField) {
    auto notJson = parseExecutorCapabilities("mario-executor: expected: run PLAN");
    ASSERT_FALSE(notJson.ok());
    EXPECT_NE(notJson.error().message.find("expected one JSON object"), std::string::npos);
    auto missing = parseExecutorCapabilities(R"({"cuda": true})");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("devices"), std::string::npos) << missing.error().message;
    auto negative = parseExecutorCapabilities(
        R"({"cuda": true, "devices": -1, "partition_sms": false, "nccl": false, "version": "1"})");
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.error().message.find("devices"), std::string::npos) << negative.error().message;
}

}  // namespace
}  // namespace mario
