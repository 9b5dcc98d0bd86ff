#pragma once
// A folder of a test's own for the files it writes. Its name is unique (mkdtemp), so two test
// runs at once — CI beside a developer's run, or ctest running cases in parallel — never write
// the same file, and it is removed with everything in it when the test ends, also when an
// assertion ended the test early: a run leaves nothing behind in the temp directory.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace mario::test {

class ScratchDir {
public:
    // `purpose` names the folder (mario_<purpose>_XXXXXX) so a leftover one says whose it was.
    explicit ScratchDir(const std::string& purpose = "test") {
        std::string pattern = (std::filesystem::temp_directory_path() / ("mario_" + purpose + "_XXXXXX")).string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a folder like " + pattern);
        path_ = pattern;
    }
    ~ScratchDir() {
        std::error_code ignored;  // a test's leftovers must not fail the test
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    // The path of `name` inside the folder (not created).
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

}  // namespace mario::test
