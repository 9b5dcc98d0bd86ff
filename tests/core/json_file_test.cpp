// How JSON files are read (core/io/JsonFile.h, JsonScan.h): the memory a parsed file may take is
// decided before any of it is built, and every malformed file names its line and column. A plan
// padded with 64 MiB of empty objects under a key the reader ignores took 2.1 GB (issue 30).
// Estimates are worked by hand from the cost table in JsonScan.h; speed and peak memory are
// measured by tests/bench/json_memory.sh, never asserted here.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/io/JsonFile.h"
#include "core/io/JsonScan.h"
#include "core/model/Limits.h"
#include "core/session/InputFile.h"
#include "tests/common/ScratchDir.h"

namespace mario {
namespace {

const PresetLibrary kPresets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");

// A plan of one stage and one device whose ignored key "padding" holds `objects` empty objects.
std::string paddedPlan(std::size_t objects) {
    std::string text = R"({"format": "mario-plan", "version": 1, "padding": [)";
    text.reserve(text.size() + 3 * objects + 200);
    for (std::size_t i = 0; i < objects; ++i) text += i ? ",{}" : "{}";
    text += R"(], "stages": [{"index": 0, "device": 0, "forward_ms": 1, "backward_ms": 2}],
               "devices": [{"index": 0, "program": ["0F0", "0B0"]}]})";
    return text;
}

TEST(JsonScan, EstimatesWhatTheParsedDocumentAllocates) {
    // [{},{},{}]: the root's 16 bytes and its vector's 32-byte chunk, 8 for the parser's first
    // level; each {} its 16-byte slot and its map's 64-byte chunk, 8 for the second level; the
    // buffer of 4 slots is a 80-byte chunk, 32 more than the 3 slots counted.
    auto scan = scanJson("[{},{},{}]", 1 << 20);
    EXPECT_EQ(scan.bytes, 16u + 32 + 8 + 3 * (16 + 64) + 8 + 32);
    EXPECT_EQ(scan.values, 4u);
    EXPECT_FALSE(scan.over_budget);
    EXPECT_EQ(scan.error_byte, 0u);
    // An object: 16 + 64, 8 for its level; each member a 96-byte node; the 28-character string a
    // 48-byte std::string and a 48-byte chunk for its 29 bytes; the number nothing more.
    scan = scanJson(R"({"name": "a string longer than fifteen", "n": 1})", 1 << 20);
    EXPECT_EQ(scan.bytes, 16u + 64 + 8 + 96 + (48 + 48) + 96);
    EXPECT_EQ(scan.values, 3u);
    // Comments are allowed, as configs are written by hand.
    EXPECT_TRUE(scanJson("// a config\n{\"a\": 1} /* done */", 1 << 20).error.empty());
}

TEST(JsonScan, StopsAtTheBudgetHoweverDeepTheText) {
    // 1e6 levels of [ would take 56 bytes a level (a slot, a vector, a level of the stack): the
    // scan stops at the budget instead of counting, or stacking, all of them.
    const auto scan = scanJson(std::string(1000000, '['), 56 * 1000);
    EXPECT_TRUE(scan.over_budget);
    EXPECT_EQ(scan.values, 1001u);  // 1000 levels are exactly 56000 bytes; the next passes
}

TEST(JsonScan, TheDensestTextsCostFarLessThanTheRatioThatSkipsTheScan) {
    // readJsonFile parses a text of at most budget / kScanFreeRatio bytes without the scan
    // (issue 45), so no valid text may cost kScanFreeRatio bytes a byte. By the table in
    // JsonScan.h: a closed level of nesting "[]" is 2 bytes for 16 + 32 + 8 and the parent's
    // buffer chunk (32 for 1 slot, 16 counted), 36 a byte; "{}," in an array 3 bytes for 16 +
    // 64 and up to 16 of doubling, 32 a byte; "\"\":{}" (a member holding an empty object, 6
    // bytes with its comma) 96 + 64 + 8 a level when nested, 28 a byte.
    auto repeat = [](const std::string& piece, int times) {
        std::string text;
        for (int i = 0; i < times; ++i) text += piece;
        return text;
    };
    const int n = 100000;
    const std::string texts[] = {
        repeat("[", n) + repeat("]", n),
        "[" + repeat("{},", n) + "{}]",
        "[" + repeat("[],", n) + "[]]",
        "[" + repeat("\"\",", n) + "\"\"]",
        repeat("{\"\":", n) + "{}" + repeat("}", n),
        "{" + repeat("\"\":{},", 1) + "\"k\":[" + repeat("{},", n) + "{}]}",
    };
    for (const std::string& text : texts) {
        const JsonScan scan = scanJson(text, std::uint64_t(1) << 40);
        ASSERT_TRUE(scan.error.empty()) << scan.error;
        const double perByte = double(scan.bytes) / double(text.size());
        EXPECT_LT(perByte, 40.0) << text.substr(0, 20);
        EXPECT_LT(perByte * 4, double(kScanFreeRatio)) << text.substr(0, 20);
    }
    // The nesting by hand: every level 56 bytes (a slot, a vector, a level of the parser's
    // stack), every level but the innermost 16 more for its one-slot buffer's chunk.
    EXPECT_EQ(scanJson(texts[0], std::uint64_t(1) << 40).bytes, 100000u * 72 - 16);
}

TEST(JsonFile, APaddedPlanIsRefusedByItsBudgetBeforeItIsBuilt) {
    // 60000 empty objects after the header: 88 (the root object and its level) + 96 + 48
    // ("format" and its string) + 96 ("version") + 96 + 32 + 8 ("padding", its array and level)
    // = 464 bytes, then 80 per object and 8 for the third level: over 4 MiB at object 52423,
    // the 52427th value (the root, "mario-plan", 1 and the array before it).
    const auto refused = parseJsonText(paddedPlan(60000), "pad.mario.json", 4 << 20);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "pad.mario.json: the JSON would take more than 4 MiB of memory once read (over 52427 values); "
              "the limit is 4 MiB");
    // Under the budget it reads as before, and the plan reader ignores the padding.
    // 40000 objects: 472 + 80 × 40000, and the buffer's 65536 slots, 1048592 bytes for
    // 640000 counted: 3609064 bytes, and a few kB for the stage and the device.
    const auto read = parseJsonText(paddedPlan(40000), "pad.mario.json", 4 << 20);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ((*read)["padding"].size(), 40000u);
}

TEST(JsonFile, TheIssuesSixtyFourMiBPlanIsRefusedWithTheRealBudget) {
    // 64 MiB of ",{}" is 22369621 objects, 80 bytes each: 1.79e9 bytes, past the 1536 MiB
    // (1.61e9) of limits::kMaxJsonMemoryBytes. It used to load, at 2.1 GB of memory.
    const test::ScratchDir dir("json_budget");
    const std::string path = dir.file("pad.mario.json");
    std::ofstream(path, std::ios::binary) << paddedPlan((64u << 20) / 3);
    const auto input = loadInputFile(path, kPresets);
    ASSERT_FALSE(input.ok());
    const std::string& message = input.error().message;
    EXPECT_EQ(message.rfind(path + ": the JSON would take more than 1536 MiB of memory once read (over ", 0), 0u)
        << message;
    EXPECT_NE(message.find("; the limit is 1536 MiB"), std::string::npos) << message;
    // The same padding at a sixteenth of the size (about 112 MB parsed) opens as the plan it is.
    std::ofstream(path, std::ios::binary | std::ios::trunc) << paddedPlan((4u << 20) / 3);
    const auto small = loadInputFile(path, kPresets);
    ASSERT_TRUE(small.ok()) << small.error().message;
    EXPECT_EQ(small->plan.instructionCount(), 2u);
}

TEST(JsonFile, EveryMalformedFileNamesItsLineAndColumn) {
    // 1e999 is no double: nlohmann's DOM parser threw it without a position. The column is the
    // number's last character, as for every other error (the byte just read).
    auto read = parseJsonText("{\"format\": \"mario-plan\",\n \"version\": 1e999}", "v.json");
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "v.json:2:17: malformed JSON: number overflow parsing '1e999'");
    read = parseJsonText("{\"a\": [1,\n\n 2,,]}", "c.json");
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "c.json:3:4: malformed JSON: unexpected ','; expected '[', '{', or a literal");
    // A byte that is not UTF-8 inside a string: nlohmann quotes what it read, escaped here.
    read = parseJsonText("{\"format\": \"mario-plan\",\n \"version\": \"\xff\"}", "u.json");
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message,
              "u.json:2:14: malformed JSON: invalid string: ill-formed UTF-8 byte; last read: '\"\\xFF'");
    // Without a name (an autosave's text), the message starts at the position.
    read = parseJsonText("[1,", "");  // the end of input is read as a fourth character
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "1:4: malformed JSON: unexpected end of input; expected '[', '{', or a literal");
}

}  // namespace
}  // namespace mario
