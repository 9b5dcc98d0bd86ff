// Text from a file inside an error message (core/util/OneLineText.h): a bare carriage return or
// binary bytes in a CSV cell used to be echoed raw, so the message was no longer one line and
// could move the terminal's cursor (issue 30). Expected strings are written out by hand.
#include <gtest/gtest.h>

#include <string>

#include "core/io/PipeliningCsv.h"
#include "core/schedule/Instruction.h"
#include "core/util/OneLineText.h"

namespace mario {
namespace {

bool oneLine(const std::string& message) {
    for (const char c : message)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return false;
    return true;
}

TEST(OneLineText, EscapesControlBytesByNameOrNumber) {
    EXPECT_EQ(escapedForMessage("0F\r1"), "0F\\r1");
    EXPECT_EQ(escapedForMessage("a\nb\tc"), "a\\nb\\tc");
    EXPECT_EQ(escapedForMessage(std::string("x\0y", 3)), "x\\x00y");
    EXPECT_EQ(escapedForMessage("\x1b[31mred"), "\\x1B[31mred");
    EXPECT_EQ(escapedForMessage("del\x7f"), "del\\x7F");
}

TEST(OneLineText, KeepsWellFormedUtf8AndEscapesEveryOtherByte) {
    EXPECT_EQ(escapedForMessage("r\xC3\xA9sum\xC3\xA9"), "r\xC3\xA9sum\xC3\xA9");          // résumé
    EXPECT_EQ(escapedForMessage("\xE6\xB5\x81\xE6\xB0\xB4"), "\xE6\xB5\x81\xE6\xB0\xB4");  // two CJK
    EXPECT_EQ(escapedForMessage("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");                  // U+1F600
    EXPECT_EQ(escapedForMessage("\xFF\xFE"), "\\xFF\\xFE");                                // never UTF-8
    EXPECT_EQ(escapedForMessage("\xC3"), "\\xC3");                                         // a truncated pair
    EXPECT_EQ(escapedForMessage("\xC0\xAF"), "\\xC0\\xAF");                                // overlong '/'
    EXPECT_EQ(escapedForMessage("\xED\xA0\x80"), "\\xED\\xA0\\x80");                       // a surrogate
    EXPECT_EQ(escapedForMessage("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");              // above U+10FFFF
    EXPECT_EQ(escapedForMessage("\xC2\x9B"), "\\u009B");                                   // C1's CSI
}

TEST(OneLineText, QuotesAndCutsWithoutSplittingAnEscape) {
    EXPECT_EQ(quotedForMessage("0F1"), "\"0F1\"");
    EXPECT_EQ(quotedForMessage(std::string(40, 'a')), "\"" + std::string(40, 'a') + "\"");
    EXPECT_EQ(quotedForMessage(std::string(41, 'a')), "\"" + std::string(37, 'a') + "...\"");
    // 36 letters then \r: "\r" would end at 38, past the 37 that leave room for "...".
    EXPECT_EQ(quotedForMessage(std::string(36, 'a') + "\r" + std::string(10, 'b')),
              "\"" + std::string(36, 'a') + "...\"");
    EXPECT_EQ(quotedForMessage("\xFF\xFF", 10), "\"\\xFF\\xFF\"");
    EXPECT_EQ(quotedForMessage("\xFF\xFF\xFF", 10), "\"\\xFF...\"");
}

TEST(OneLineText, ACsvCellWithABareCarriageReturnStaysOnOneLine) {
    // Line 2 of a file whose cell "0F\r1" lost its newline: splitLines cuts at \n only.
    const auto csv = parsePipeliningCsv("0F0,0B0\n0F\r1,1B0\n");
    ASSERT_FALSE(csv.ok());
    EXPECT_EQ(csv.error().message, "line 2, column 1: instruction \"0F\\r1\" lacks a micro-batch number after F");
    EXPECT_TRUE(oneLine(csv.error().message));
}

TEST(OneLineText, BinaryBytesInACsvCellAreEscaped) {
    const auto csv = parsePipeliningCsv("0F0,\x01\xFF\xFEQ\x1b[31m\n");
    ASSERT_FALSE(csv.ok());
    EXPECT_EQ(csv.error().message,
              "line 1, column 2: instruction \"\\x01\\xFF\\xFEQ\\x1B[31m\" does not start with a stage number");
    EXPECT_TRUE(oneLine(csv.error().message));
    // An OVERLAP_F_B composite quotes the cell and its part.
    const auto composite = parsePipeliningCsv("(0F0;1B\x01)OVERLAP_F_B\n");
    ASSERT_FALSE(composite.ok());
    EXPECT_EQ(composite.error().message, "line 1, column 1: \"(0F0;1B\\x01)OVERLAP_F_B\": instruction \"1B\\x01\" "
                                         "lacks a micro-batch number after B");
}

TEST(OneLineText, APlanActionWithAControlCharacterIsEscaped) {
    // A plan's program strings are JSON, where "\u000d" is a legal carriage return.
    const auto action = parseAction("1B\r");
    ASSERT_FALSE(action.ok());
    EXPECT_EQ(action.error().message, "instruction \"1B\\r\" lacks a micro-batch number after B");
}

}  // namespace
}  // namespace mario
