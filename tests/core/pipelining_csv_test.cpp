// PyTorch pipelining compute_only CSV: export of a hand-made plan, import of what PyTorch and
// spreadsheets write, the round trip, and errors that point at the offending cell.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/PipeliningCsv.h"

namespace mario {
namespace {

using Programs = std::vector<std::vector<Instruction>>;

std::vector<Instruction> actions(const std::vector<const char*>& texts) {
    std::vector<Instruction> program;
    for (const char* text : texts) program.push_back(parseAction(text).value());
    return program;
}

// Two devices with checkpointing, a split backward, and the data-parallel tail.
Plan handMadePlan() {
    Plan plan;
    plan.stages = {StageSpec{0, 0, {}, {}}, StageSpec{1, 1, {}, {}}};
    plan.devices = {
        {0, actions({"0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0R0", "0B0", "0RECV_B1",
                     "0I1", "0W1", "0REDUCE_GRAD", "0OPT"})},
        {1, actions({"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1", "1B1", "1SEND_B1"})},
    };
    return plan;
}

TEST(PipeliningCsv, ExportsComputeActionsOneLinePerRank) {
    EXPECT_EQ(toPipeliningCsv(handMadePlan()),
              "0F0,0F1,0R0,0B0,0I1,0W1\n"
              "1F0,1B0,1F1,1B1\n");
}

TEST(PipeliningCsv, ExportPutsEachDeviceOnTheLineOfItsRank) {
    Plan plan;
    plan.devices = {{2, actions({"1F0", "1B0"})}, {0, actions({"0F0", "0SEND_F0", "0B0"})}};
    EXPECT_EQ(toPipeliningCsv(plan), "0F0,0B0\n\n1F0,1B0\n");
}

TEST(PipeliningCsv, ImportsWhatPyTorchWrites) {
    // Idle slots as "None" and as blank cells, padding, a trailing comma, CRLF, trailing
    // blank lines.
    const std::string text =
        "0F0,None,0F1, ,0B0,,0B1,\r\n"
        " None , 1F0,1B0 ,1F1,1B1\r\n"
        "\r\n";
    auto parsed = parsePipeliningCsv(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(*parsed, (Programs{actions({"0F0", "0F1", "0B0", "0B1"}),
                                 actions({"1F0", "1B0", "1F1", "1B1"})}));
}

TEST(PipeliningCsv, ImportsSplitBackwardQuotedCellsAndByteOrderMark) {
    auto parsed = parsePipeliningCsv("\xEF\xBB\xBF\"0F0\",0I0,0W0\n1F0,1I0,1W0");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(*parsed, (Programs{actions({"0F0", "0I0", "0W0"}), actions({"1F0", "1I0", "1W0"})}));
}

TEST(PipeliningCsv, BlankLineInTheMiddleIsAnIdleRank) {
    auto parsed = parsePipeliningCsv("0F0,0B0\n\n2F0,2B0\n");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    ASSERT_EQ(parsed->size(), 3u);
    EXPECT_TRUE((*parsed)[1].empty());
    EXPECT_EQ((*parsed)[2], actions({"2F0", "2B0"}));
}

TEST(PipeliningCsv, EmptyTextHasNoRanks) {
    auto parsed = parsePipeliningCsv("");
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(parsed->empty());
}

TEST(PipeliningCsv, ExportThenImportKeepsTheComputeOrder) {
    const Plan plan = handMadePlan();
    auto parsed = parsePipeliningCsv(toPipeliningCsv(plan));
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    ASSERT_EQ(parsed->size(), plan.devices.size());
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        std::vector<Instruction> expected;
        for (const auto& instruction : plan.devices[d].program)
            if (isCompute(instruction.op) && hasMicrobatch(instruction.op)) expected.push_back(instruction);
        EXPECT_EQ((*parsed)[d], expected) << "device " << d;
    }
}

TEST(PipeliningCsv, UnknownActionNamesLineAndColumn) {
    auto parsed = parsePipeliningCsv("0F0,0B0\n1F0,1B0,,None,1Q3\n");
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().message, "line 2, column 5: unknown instruction \"1Q3\"");
}

TEST(PipeliningCsv, CommunicationActionsAreNotComputeOnly) {
    auto parsed = parsePipeliningCsv("0F0,0SEND_F0\n");
    ASSERT_FALSE(parsed.ok());
    const std::string& message = parsed.error().message;
    EXPECT_EQ(message.rfind("line 1, column 2: ", 0), 0u) << message;
    EXPECT_NE(message.find("0SEND_F0"), std::string::npos) << message;
    EXPECT_NE(message.find("communication"), std::string::npos) << message;
}

TEST(PipeliningCsv, MalformedActionsNameTheirCell) {
    for (const char* text : {"0F0\r\n1F\r\n", "0F0\nx\n", "0F0\n0UNSHARD\n"}) {
        SCOPED_TRACE(text);
        auto parsed = parsePipeliningCsv(text);
        ASSERT_FALSE(parsed.ok());
        EXPECT_EQ(parsed.error().message.rfind("line 2, column 1: ", 0), 0u) << parsed.error().message;
    }
}

TEST(PipeliningCsv, WritesAndReadsFiles) {
    const Plan plan = handMadePlan();
    const auto path = std::filesystem::temp_directory_path() / ("mario_pipelining_csv_test_" + std::to_string(::getpid()) + ".csv");
    auto written = writePipeliningCsv(plan, path.string());
    ASSERT_TRUE(written.ok()) << written.error().message;
    auto read = readPipeliningCsvFile(path.string());
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(read->size(), 2u);
    EXPECT_EQ((*read)[1], actions({"1F0", "1B0", "1F1", "1B1"}));

    {
        std::ofstream bad(path);
        bad << "0F0,0X0\n";
    }
    auto badRead = readPipeliningCsvFile(path.string());
    ASSERT_FALSE(badRead.ok());
    EXPECT_EQ(badRead.error().message, path.string() + ": line 1, column 2: unknown instruction \"0X0\"");
    std::filesystem::remove(path);

    const std::string missing = "/nonexistent-dir/schedule.csv";
    auto notThere = readPipeliningCsvFile(missing);
    ASSERT_FALSE(notThere.ok());
    EXPECT_NE(notThere.error().message.find(missing), std::string::npos);
    auto unwritable = writePipeliningCsv(plan, missing);
    ASSERT_FALSE(unwritable.ok());
    EXPECT_NE(unwritable.error().message.find(missing), std::string::npos);
}

}  // namespace
}  // namespace mario
