// The executor at its limits (issue 39): a run refused before any thread or weight when it needs
// more threads than the machine allows, every usage error in one line with exit 2, bad token files
// and launches exit 2 (not 5, a failed run), readers bounded on devices and pipes, and outputs that
// never lose the old file or leave half of a new one.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/io/PlanJson.h"
#include "core/util/ExitCode.h"
#include "executor/ThreadBudget.h"
#include "executor/TokenFile.h"
#include "tests/common/ScratchDir.h"
#include "tests/common/UnitPlans.h"
#include "tests/executor/RunCli.h"

namespace {

using mario::exec::MachineThreads;
using mario::test::runExecutorCli;
using mario::test::runExecutorCliAfter;

int lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// A refusal as the tools make them (docs/exit-codes.md): exit 2 and one line that says `phrase`.
void expectRefusal(int code, const std::string& out, const std::string& phrase) {
    EXPECT_EQ(code, mario::kBadInput) << out;
    EXPECT_EQ(lines(out), 1) << out;
    EXPECT_NE(out.find(phrase), std::string::npos) << out;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A 1F1B plan of `devices` devices written to `dir`.
std::string writePlan(const mario::test::ScratchDir& dir, int devices, int microbatches) {
    auto plan = mario::test::makeUnitPlan(mario::Scheme::OneFOneB, devices, microbatches);
    EXPECT_TRUE(plan.ok());
    const std::string path = dir.file("plan" + std::to_string(devices) + ".mario.json");
    EXPECT_TRUE(mario::writePlanFile(*plan, path).ok());
    return path;
}

TEST(ThreadBudget, HalfOfWhatTheMachineHasLeftUnderTheCeiling) {
    MachineThreads machine;
    machine.pid_max = 32768;
    machine.threads_max = 192730;
    machine.running = 112;
    // pid_max is the tightest: (32768 - 112) / 2.
    EXPECT_EQ(mario::exec::threadLimit(machine).threads, 16328);
    machine.user_limit = 4000;  // ulimit -u: (4000 - 112) / 2
    EXPECT_EQ(mario::exec::threadLimit(machine).threads, 1944);
    EXPECT_NE(mario::exec::threadLimit(machine).why.find("ulimit -u 4000"), std::string::npos);
    machine.map_count = 4000;  // 2 maps a stack, half of them: 4000 / 4
    EXPECT_EQ(mario::exec::threadLimit(machine).threads, 1000);
    // A machine that limits nothing still has the fixed ceiling.
    EXPECT_EQ(mario::exec::threadLimit(MachineThreads{}).threads, mario::exec::kMaxRunThreads);
    MachineThreads huge;
    huge.pid_max = 4194304;
    EXPECT_EQ(mario::exec::threadLimit(huge).threads, 16384);
}

TEST(ThreadBudget, ReadsTheMachineFromProcFiles) {
    const mario::test::ScratchDir root("threads");
    std::filesystem::create_directories(root.path() / "proc/sys/kernel");
    std::filesystem::create_directories(root.path() / "proc/sys/vm");
    std::ofstream(root.file("proc/sys/kernel/pid_max")) << "32768\n";
    std::ofstream(root.file("proc/sys/kernel/threads-max")) << "192730\n";
    std::ofstream(root.file("proc/sys/vm/max_map_count")) << "65530\n";
    std::ofstream(root.file("proc/loadavg")) << "0.52 0.58 0.59 3/712 12345\n";
    const MachineThreads machine = mario::exec::readMachineThreads(root.path());
    EXPECT_EQ(machine.pid_max, 32768);
    EXPECT_EQ(machine.threads_max, 192730);
    EXPECT_EQ(machine.map_count, 65530);
    EXPECT_EQ(machine.running, 712);
    EXPECT_FALSE(machine.user_limit.has_value());  // only read for the real root
}

TEST(ThreadBudget, TheRefusalNamesTheThreadsTheLimitAndWhatToLower) {
    const mario::exec::ThreadLimit limit{1000, "a test's limit"};
    EXPECT_FALSE(mario::exec::threadRefusal(250, 4, limit).has_value());  // exactly 1000
    const auto refused = mario::exec::threadRefusal(256, 128, limit);
    ASSERT_TRUE(refused.has_value());
    EXPECT_NE(refused->find("needs 32768 threads (256 devices x 128 replicas"), std::string::npos) << *refused;
    EXPECT_NE(refused->find("limit of 1000, a test's limit"), std::string::npos) << *refused;
    EXPECT_NE(refused->find("lower --dp to 3 or less"), std::string::npos) << *refused;  // 1000 / 256
    const auto tooManyDevices = mario::exec::threadRefusal(2000, 1, limit);
    ASSERT_TRUE(tooManyDevices.has_value());
    EXPECT_EQ(tooManyDevices->find("lower --dp"), std::string::npos) << *tooManyDevices;
}

TEST(ExecutorLimits, ARunNeedingMoreThreadsThanTheLimitIsRefusedBeforeAnyStarts) {
    // 256 devices x --dp 128 = 32768 threads: above the ceiling on any machine. Before, the
    // threads were started until none was left and the process aborted (SIGABRT, "terminate
    // called without an active exception") after building every replica's weights.
    const mario::test::ScratchDir dir("executor_limits");
    const std::string plan = writePlan(dir, 256, 4);  // 4 micro-batches: the memory estimate passes
    int code = 0;
    const std::string out = runExecutorCli("run " + plan + " --backend cpu --model tiny --dp 128", code);
    expectRefusal(code, out, "needs 32768 threads (256 devices x 128 replicas");
    EXPECT_NE(out.find("lower --dp to"), std::string::npos) << out;
}

TEST(ExecutorLimits, EveryUsageErrorIsOneLineAndExitTwo) {
    for (const char* args : {"run nothing.mario.json --frobnicate", "run nothing.mario.json --dp",
                             "run nothing.mario.json --optimizer momentum", "run", "walk plan.mario.json",
                             "profile --frobnicate", "profile --model tiny", "capabilities --verbose"}) {
        int code = 0;
        const std::string out = runExecutorCli(args, code);
        EXPECT_EQ(code, mario::kBadInput) << args << ": " << out;
        EXPECT_EQ(lines(out), 1) << args << ": " << out;
    }
}

TEST(ExecutorLimits, ATokenFileShorterThanASampleIsBadInputNotAFailedRun) {
    const mario::test::ScratchDir dir("executor_limits");
    const std::string plan = writePlan(dir, 2, 2);
    const std::string tokens = dir.file("short.txt");
    std::ofstream(tokens) << "1 2 3\n";  // seq 16 needs 17 tokens a sample
    int code = 0;
    const std::string out =
        runExecutorCli("run " + plan + " --backend cpu --model tiny,seq=16,vocab=64 --tokens " + tokens, code);
    expectRefusal(code, out, "needs at least 17 tokens for seq=16, has 3");
}

TEST(ExecutorLimits, ATokenOutsideTheVocabularyIsBadInput) {
    const mario::test::ScratchDir dir("executor_limits");
    const std::string plan = writePlan(dir, 2, 2);
    const std::string tokens = dir.file("big-ids.txt");
    std::ofstream out(tokens);
    for (int i = 0; i < 100; ++i) out << (i == 5 ? 500 : i % 10) << ' ';
    out.close();
    int code = 0;
    const std::string said =
        runExecutorCli("run " + plan + " --backend cpu --model tiny,seq=8,vocab=64 --tokens " + tokens, code);
    expectRefusal(code, said, "token 500 at position 5");
}

TEST(ExecutorLimits, AWorldSizeThatIsNotAMultipleOfTheDevicesIsBadInput) {
    const mario::test::ScratchDir dir("executor_limits");
    const std::string plan = writePlan(dir, 2, 2);
    int code = 0;
    const std::string out = runExecutorCliAfter("WORLD_SIZE=3 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 ",
                                                "run " + plan + " --backend cpu --model tiny", code);
    expectRefusal(code, out, "WORLD_SIZE=3 is not a multiple of the plan's 2 pipeline devices");
}

TEST(ExecutorLimits, TokensAndPlansFromEndlessDevicesStopAtTheLimitInOneLine) {
    // Before, /dev/zero was read until memory ran out. A stream is read up to what the run can
    // use, in whole MiB: 2 bytes a token in a .bin, 24 in text.
    EXPECT_EQ(mario::exec::tokenStreamBytes("x.bin", 36), 1 << 20);
    EXPECT_EQ(mario::exec::tokenStreamBytes("x.bin", 3 << 19), 3 << 20);
    EXPECT_EQ(mario::exec::tokenStreamBytes("x.txt", (3 << 19) + 1), 37 << 20);  // 24 x (1.5 Mi + 1)
    EXPECT_EQ(mario::exec::tokenStreamBytes("x.txt", 1ll << 40), 256 << 20);
    auto endless = mario::exec::readTokenFile("/dev/zero", 1 << 20);
    ASSERT_FALSE(endless.ok());
    EXPECT_NE(endless.error().message.find("/dev/zero"), std::string::npos) << endless.error().message;
    const mario::test::ScratchDir dir("executor_limits");
    const std::string plan = writePlan(dir, 2, 2);
    for (const std::string& args : {"run " + plan + " --backend cpu --model tiny --tokens /dev/zero",
                                    "run " + plan + " --backend cpu --model tiny --tokens /dev/urandom",
                                    std::string("run /dev/zero --backend cpu --model tiny")}) {
        int code = 0;
        const std::string out = runExecutorCli(args, code);
        EXPECT_EQ(code, mario::kBadInput) << args << ": " << out;
        EXPECT_EQ(lines(out), 1) << args << ": " << out;
    }
}

TEST(ExecutorLimits, ATokenFileFromAPipeIsReadOnce) {
    // The CLI checked the file and the run read it again: from a pipe the second read found
    // nothing ("has no tokens", exit 5). Now it is read once and handed to the run.
    const mario::test::ScratchDir dir("executor_limits");
    const std::string plan = writePlan(dir, 2, 2);
    const std::string ids = dir.file("ids.txt"), fifo = dir.file("ids.fifo");
    std::ofstream out(ids);
    for (int i = 0; i < 200; ++i) out << i % 64 << '\n';
    out.close();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    int code = 0;
    const std::string said = runExecutorCliAfter("cat " + ids + " > " + fifo + " & ",
                                                 "run " + plan + " --backend cpu --model tiny --tokens " + fifo, code);
    EXPECT_EQ(code, mario::kOk) << said;
    EXPECT_NE(said.find("\"loss\""), std::string::npos) << said;
}

TEST(ExecutorLimits, EverySampleOfTheRunIsCheckedOnceAndOffsetsRepeat) {
    mario::exec::TokenFile file;
    file.path = "t.txt";
    for (int i = 0; i < 20; ++i) file.ids.push_back(i);
    file.max_id = 19;
    // seq 4: samples start at (5 i) mod 16; every id of 0..19 is read by some sample.
    EXPECT_TRUE(file.checkSamples(1000000000, 4, 20).ok());
    EXPECT_FALSE(file.checkSamples(16, 4, 19).ok());  // id 19 is read (offset 15 + 4)
    EXPECT_TRUE(file.checkSamples(3, 4, 15).ok());    // offsets 0, 5, 10: ids up to 14
}

TEST(ExecutorLimits, ProfileIsRefusedForMemoryBlocksAndTimeInOneLine) {
    const mario::test::ScratchDir dir("executor_limits");
    const std::string out = dir.file("p.profile.json");
    for (const std::string& args : {// Eager attention's scores alone: 65536 x 4 heads x 4096^2 x 8 bytes, 35 TB.
                                    std::string("--model tiny,seq=4096 --micro-batch-size 65536"),
                                    // One weight of 26 TB: was LibTorch's 33-line allocator backtrace.
                                    std::string("--model hidden=1048576,heads=16"),
                                    // A master copy of 2.6 PB, built block by block until memory ran out.
                                    std::string("--model layers=100000,hidden=16384,heads=16,seq=16,vocab=64"),
                                    std::string("--model tiny --max-blocks 4096"),
                                    // 100001 repeats of 1 + 2 + ... + 256 blocks: days at any speed.
                                    std::string("--model tiny --max-blocks 256 --repeats 100000")}) {
        int code = 0;
        const std::string said = runExecutorCli("profile " + args + " -o " + out, code);
        EXPECT_EQ(code, mario::kBadInput) << args << ": " << said;
        EXPECT_EQ(lines(said), 1) << args << ": " << said;
        EXPECT_FALSE(std::filesystem::exists(out)) << args;
    }
}

TEST(ExecutorLimits, AProfileThatCannotBeWrittenLeavesTheOldOneWhole) {
    // A file size limit (ulimit -f, 512-byte blocks) makes the write fail part-way, as a full
    // disk does. Before, the old profile was truncated first and left cut off.
    const mario::test::ScratchDir dir("executor_limits");
    const std::string path = dir.file("old.profile.json");
    const std::string old(300, 'x');
    std::ofstream(path) << old;
    int code = 0;
    const std::string out = runExecutorCliAfter("ulimit -f 1; trap '' XFSZ; ",
                                                "profile --model tiny --max-blocks 1 --repeats 1 -o " + path, code);
    EXPECT_EQ(code, mario::kBadInput) << out;
    EXPECT_EQ(lines(out), 1) << out;
    EXPECT_EQ(slurp(path), old);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
    EXPECT_EQ(files, 1u) << "a temporary file was left beside it";
}

TEST(ExecutorLimits, AStepDumpThatCannotBeWrittenRemovesItsFilesAndKeepsOthers) {
    const mario::test::ScratchDir dir("executor_limits");
    const std::string plan = writePlan(dir, 2, 2);
    const std::filesystem::path dump = dir.path() / "step";
    std::filesystem::create_directories(dump);
    std::ofstream(dump / "notes.txt") << "mine";
    std::ofstream(dump / "step.json") << "an earlier dump";
    int code = 0;
    const std::string out =
        runExecutorCliAfter("ulimit -f 1; trap '' XFSZ; ",
                            "run " + plan + " --backend cpu --model tiny --dump-step " + dump.string(), code);
    expectRefusal(code, out, "--dump-step");
    std::vector<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(dump)) left.push_back(entry.path().filename());
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<std::string>{"notes.txt", "step.json"}));
    EXPECT_EQ(slurp((dump / "step.json").string()), "an earlier dump");
    // A folder the run made is gone again when nothing was written into it.
    const std::filesystem::path fresh = dir.path() / "fresh";
    runExecutorCliAfter("ulimit -f 1; trap '' XFSZ; ",
                        "run " + plan + " --backend cpu --model tiny --dump-step " + fresh.string(), code);
    EXPECT_EQ(code, mario::kBadInput);
    EXPECT_FALSE(std::filesystem::exists(fresh));
}

}  // namespace
