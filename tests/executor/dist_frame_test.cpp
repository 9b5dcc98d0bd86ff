// The mesh's frame header (executor/dist/Frame.h): a fixed little-endian layout, and a corrupt
// header is an error rather than a giant allocation.
#include <gtest/gtest.h>

#include <cstdint>

#include "executor/dist/Frame.h"

namespace {

using mario::dist::FrameHeader;
using mario::dist::MessageKey;

TEST(DistFrame, HeaderRoundTripsWithNegativeKeys) {
    const FrameHeader header{MessageKey{-3, 7, -1, 2147483647}, 8u << 20};
    auto bytes = header.encode();
    auto decoded = FrameHeader::decode(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(decoded->key, header.key);
    EXPECT_EQ(decoded->payloadBytes, header.payloadBytes);
    // Little-endian on the wire whatever the host: the magic reads "MFR1", the size follows.
    EXPECT_EQ(static_cast<char>(bytes[0]), 'M');
    EXPECT_EQ(static_cast<char>(bytes[3]), '1');
    EXPECT_EQ(std::to_integer<int>(bytes[8 + 2]), 0x80);  // 8 MiB = 0x800000
}

TEST(DistFrame, AnOversizedFrameIsReportedAsCorrupt) {
    auto bytes = FrameHeader{MessageKey{1, 0, 0, 0}, FrameHeader::kMaxPayloadBytes}.encode();
    EXPECT_TRUE(FrameHeader::decode(bytes).ok());
    bytes = FrameHeader{MessageKey{1, 0, 0, 0}, FrameHeader::kMaxPayloadBytes + 1}.encode();
    auto decoded = FrameHeader::decode(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.error().message,
              "a frame announcing 17179869185 bytes, over the 16 GiB limit (the stream is corrupt)");
}

TEST(DistFrame, AHeaderWithoutTheMagicIsReportedAsCorrupt) {
    auto bytes = FrameHeader{MessageKey{1, 2, 3, 4}, 10}.encode();
    bytes[1] = std::byte{0};
    auto decoded = FrameHeader::decode(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_NE(decoded.error().message.find("corrupt"), std::string::npos);
}

}  // namespace
