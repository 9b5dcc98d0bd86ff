#pragma once
// Reading Linux's /proc and /sys files under a root folder (tests point it at a fake tree):
// shared by the memory limits and the thread budget, which read the machine the same way.
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace mario::exec {

// A path such as /proc/meminfo under `root` (an absolute path would replace root when joined).
inline std::filesystem::path underRoot(const std::filesystem::path& root, const std::string& path) {
    return root / std::filesystem::path(path).relative_path();
}

// The whole text of such a file. They report a size of 0, so they are read as a stream, not by
// size; none when the file cannot be opened.
inline std::optional<std::string> readProcText(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace mario::exec
