// docs/architecture.md: core/ is C++ and nlohmann_json only. This fails the build's tests the day
// someone includes Qt, Torch, CUDA or NCCL from core.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

namespace {

TEST(HouseRules, CoreIncludesNoQtTorchCudaOrNccl) {
    const std::filesystem::path core = std::filesystem::path(MARIO_TEST_SOURCE_DIR) / "core";
    ASSERT_TRUE(std::filesystem::is_directory(core));
    const std::regex forbidden(R"(#\s*include\s*[<"](Q[A-Za-z]|qcustomplot|torch/|ATen/|c10/|cuda|nccl))");
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(core)) {
        if (!entry.is_regular_file()) continue;
        const auto extension = entry.path().extension();
        if (extension != ".h" && extension != ".cpp") continue;
        ++files;
        std::ifstream in(entry.path());
        std::string line;
        int number = 0;
        while (std::getline(in, line)) {
            ++number;
            EXPECT_FALSE(std::regex_search(line, forbidden)) << entry.path() << ":" << number << ": " << line;
        }
    }
    EXPECT_GT(files, 20);
}

}  // namespace
