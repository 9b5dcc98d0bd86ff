#include "core/io/TextFile.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/model/Limits.h"

namespace mario {

Result<std::string> readTextFile(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<std::uintmax_t>(limits::kMaxFileBytes))
        return makeError(path + ": the file is " + std::to_string(size >> 20) + " MiB; the limit is " +
                         std::to_string(limits::kMaxFileBytes >> 20) + " MiB");
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(path + ": cannot open the file");
    // Read at the size the file has: grown character by character, the string doubled its
    // buffer and held the old one while copying, twice the file for a moment (a 250 MiB file
    // peaked at 484 MB before its first byte was parsed). Whatever comes beyond that size (a
    // file still being written, a pipe whose size reads 0) is appended after.
    std::string text;
    if (!ec) text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (in.bad()) return makeError(path + ": cannot read the file");
    in.clear();
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return makeError(path + ": cannot read the file");
    return text;
}

Result<bool> writeTextFile(const std::string& path, const std::string& text, const std::string& what) {
    // Written beside the target and renamed over it, so a crash or a full disk mid-write
    // leaves the old file whole rather than a truncated one.
    const std::string partial = path + ".partial";
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        if (!out) return makeError("cannot open \"" + path + "\" for writing " + what);
        out << text;
        out.close();
        if (!out) {
            std::filesystem::remove(partial);
            return makeError("cannot write " + what + " to \"" + path + "\"");
        }
    }
    std::error_code ec;
    std::filesystem::rename(partial, path, ec);
    if (ec) {
        std::filesystem::remove(partial, ec);
        return makeError("cannot write " + what + " to \"" + path + "\" (" + ec.message() + ")");
    }
    return true;
}

}  // namespace mario
