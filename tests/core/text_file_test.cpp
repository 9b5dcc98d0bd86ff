// The one writer and reader (core/io/TextFile.h) on every kind of path a user can name: what was
// named is what gets written, nothing old is lost on a write error, and no read runs unbounded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "core/io/TextFile.h"
#include "tests/common/ScratchDir.h"

namespace mario {
namespace {

namespace fs = std::filesystem;

class TextFileTest : public ::testing::Test {
protected:
    std::string slurp(const fs::path& path) {
        std::ifstream in(path, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    void put(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
    mode_t modeOf(const fs::path& path) {
        struct stat info {};
        EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
        return info.st_mode;
    }
    // Only the files the test made: a temporary file left behind would show here.
    int entries() { return static_cast<int>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator())); }

    test::ScratchDir scratch_{"text_file"};
    const fs::path dir_ = scratch_.path();
};

TEST_F(TextFileTest, ANewFileGetsTheUmasksModeAndNothingIsLeftBeside) {
    const mode_t mask = ::umask(022);
    ::umask(mask);
    ASSERT_TRUE(writeTextFile((dir_ / "plan.json").string(), "{}\n", "the plan"));
    EXPECT_EQ(slurp(dir_ / "plan.json"), "{}\n");
    EXPECT_EQ(modeOf(dir_ / "plan.json") & 0777, 0666 & ~mask);
    ASSERT_TRUE(writeTextFile((dir_ / "run.sh").string(), "#!/bin/sh\n", "the script", {.executable = true}));
    EXPECT_EQ(modeOf(dir_ / "run.sh") & 0777, 0777 & ~mask);
    EXPECT_EQ(entries(), 2);
}

TEST_F(TextFileTest, AReplacedFileKeepsItsModeAndAScriptGainsExecuteWhereReadable) {
    put(dir_ / "a.csv", "old");
    ::chmod((dir_ / "a.csv").c_str(), 0640);
    ASSERT_TRUE(writeTextFile((dir_ / "a.csv").string(), "new", "the CSV"));
    EXPECT_EQ(slurp(dir_ / "a.csv"), "new");
    EXPECT_EQ(modeOf(dir_ / "a.csv") & 07777, 0640u);
    ASSERT_TRUE(writeTextFile((dir_ / "a.csv").string(), "script", "the script", {.executable = true}));
    EXPECT_EQ(modeOf(dir_ / "a.csv") & 07777, 0750u);  // r-- gains x for owner and group, none for others
    EXPECT_EQ(entries(), 1);
}

TEST_F(TextFileTest, ALinkStaysALinkAndTheFileItNamesIsReplaced) {
    put(dir_ / "real.json", "old");
    fs::create_symlink("real.json", dir_ / "link.json");  // relative, taken from the link's folder
    ASSERT_TRUE(writeTextFile((dir_ / "link.json").string(), "new", "the plan"));
    EXPECT_TRUE(S_ISLNK(modeOf(dir_ / "link.json")));
    EXPECT_EQ(slurp(dir_ / "real.json"), "new");
    // A link to nothing yet creates what it names.
    fs::create_symlink(dir_ / "later.json", dir_ / "dangling.json");
    ASSERT_TRUE(writeTextFile((dir_ / "dangling.json").string(), "made", "the plan"));
    EXPECT_TRUE(S_ISLNK(modeOf(dir_ / "dangling.json")));
    EXPECT_EQ(slurp(dir_ / "later.json"), "made");
    EXPECT_EQ(entries(), 4);
}

TEST_F(TextFileTest, AFifoIsWrittenThroughNotReplaced) {
    const fs::path fifo = dir_ / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] { received = slurp(fifo); });
    const auto written = writeTextFile(fifo.string(), "through the pipe", "the trace");
    reader.join();
    ASSERT_TRUE(written) << written.error().message;
    EXPECT_EQ(received, "through the pipe");
    EXPECT_TRUE(S_ISFIFO(modeOf(fifo)));
}

TEST_F(TextFileTest, ADeviceIsWrittenThroughAndItsErrorNamed) {
    // As root a node of our own (the null device's numbers) stands in for /dev/null, so that a
    // regression replaces a node in a scratch folder, not the machine's; others cannot replace
    // /dev/null and use it.
    fs::path null = "/dev/null";
    if (::geteuid() == 0) {
        null = dir_ / "null";
        // A container may refuse to make or open device nodes; then there is no safe device here.
        const bool made = ::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
        const int probe = made ? ::open(null.c_str(), O_WRONLY) : -1;
        if (probe < 0) GTEST_SKIP() << "no device node of our own can be made and opened here (as root)";
        ::close(probe);
    }
    const auto written = writeTextFile(null.string(), "discarded", "the plan");
    ASSERT_TRUE(written) << written.error().message;
    EXPECT_TRUE(S_ISCHR(modeOf(null)));
    // Only while it is the device (a regular file there would be overwritten, not refused).
    const int fullProbe = fs::is_character_file("/dev/full") ? ::open("/dev/full", O_WRONLY) : -1;
    if (fullProbe >= 0) {
        ::close(fullProbe);
        const auto full = writeTextFile("/dev/full", "x", "the plan");
        ASSERT_FALSE(full);
        EXPECT_EQ(full.error().message, "cannot write the plan to \"/dev/full\" (No space left on device)");
        EXPECT_TRUE(S_ISCHR(modeOf("/dev/full")));
    }
}

TEST_F(TextFileTest, AFailedWriteKeepsTheOldFileWholeAndLeavesNoTemporary) {
    put(dir_ / "plan.json", "the old plan");
    // A file-size limit makes the write fail part-way, as a full disk would; in a child, so the
    // limit stays there.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        const auto written = writeTextFile((dir_ / "plan.json").string(), std::string(1 << 20, 'x'), "the plan");
        const bool named = !written && written.error().message == "cannot write the plan to \"" +
                                                                      (dir_ / "plan.json").string() +
                                                                      "\" (File too large)";
        ::_exit(named ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the error was not one named line";
    EXPECT_EQ(slurp(dir_ / "plan.json"), "the old plan");
    EXPECT_EQ(entries(), 1);
}

TEST_F(TextFileTest, ADirectoryIsRefusedBothWays) {
    const auto written = writeTextFile(dir_.string(), "x", "the plan");
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().message, "cannot write the plan to \"" + dir_.string() + "\": it is a directory");
    const auto read = readTextFile(dir_.string());
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().message, dir_.string() + ": is a directory, not a file");
    const auto missing = writeTextFile((dir_ / "no" / "plan.json").string(), "x", "the plan");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("(no folder"), std::string::npos) << missing.error().message;
}

TEST_F(TextFileTest, ReadsStopAtTheLimitOnDevicesPipesAndFiles) {
    const auto zero = readTextFile("/dev/zero", 1 << 20);
    ASSERT_FALSE(zero);
    EXPECT_EQ(zero.error().message,
              "/dev/zero: more than 1 MiB came from it (it is not a regular file); the limit is 1 MiB");
    put(dir_ / "big", std::string((1 << 20) + 1, 'x'));
    const auto big = readTextFile((dir_ / "big").string(), 1 << 20);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().message, (dir_ / "big").string() + ": the file is 1048577 bytes; the limit is 1 MiB");
    // Exactly the limit is fine, from a file and from a pipe.
    put(dir_ / "big", std::string(1 << 20, 'y'));
    EXPECT_EQ(readTextFile((dir_ / "big").string(), 1 << 20)->size(), std::size_t{1} << 20);
    const fs::path fifo = dir_ / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] { put(fifo, std::string(200000, 'z')); });
    const auto piped = readTextFile(fifo.string(), 1 << 20);
    writer.join();
    ASSERT_TRUE(piped) << piped.error().message;
    EXPECT_EQ(*piped, std::string(200000, 'z'));
    // A limit that is no whole number of MiB is said in bytes, never "0 MiB".
    const auto small = readTextFile("/dev/zero", 1000);
    ASSERT_FALSE(small);
    EXPECT_EQ(small.error().message,
              "/dev/zero: more than 1000 bytes came from it (it is not a regular file); the limit is 1000 bytes");
    const auto missing = readTextFile((dir_ / "none.json").string());
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message,
              (dir_ / "none.json").string() + ": cannot open the file (No such file or directory)");
}

}  // namespace
}  // namespace mario
