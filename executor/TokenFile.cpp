#include "executor/TokenFile.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <sstream>

#include "core/io/TextFile.h"

namespace mario::exec {
namespace {

std::string inQuotes(const std::string& text) { return "\"" + text + "\""; }

// A binary file read as text yields arbitrarily long "words"; keep the message one short line.
std::string clipped(const std::string& word) { return word.size() <= 40 ? word : word.substr(0, 40) + "..."; }

bool isBin(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".bin";
}

// (a · b) mod m without overflow for any m < 2^63: token files may exceed 2^32 tokens.
std::uint64_t mulMod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
    a %= m;
    b %= m;
    std::uint64_t result = 0;
    while (b > 0) {
        if (b & 1) result = (result >= m - a) ? result - (m - a) : result + a;
        a = (a >= m - a) ? a - (m - a) : a + a;
        b >>= 1;
    }
    return result;
}

Result<TokenFile> parseBin(TokenFile file, const std::string& bytes) {
    if (bytes.size() % 2 != 0)
        return makeError("token file " + inQuotes(file.path) + ": " + std::to_string(bytes.size()) +
                         " bytes is not a whole number of uint16 tokens (.bin files are little-endian uint16)");
    file.ids.reserve(bytes.size() / 2);
    for (std::size_t i = 0; i < bytes.size(); i += 2) {
        const auto lo = static_cast<unsigned char>(bytes[i]), hi = static_cast<unsigned char>(bytes[i + 1]);
        file.ids.push_back(static_cast<std::int64_t>(lo | (hi << 8)));
    }
    return file;
}

Result<TokenFile> parseText(TokenFile file, const std::string& text) {
    std::istringstream lines(text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
        std::istringstream words(line);
        std::string word;
        while (words >> word) {
            const std::string where = "token file " + inQuotes(file.path) + " line " + std::to_string(number) + ": ";
            std::int64_t id = 0;
            const char* first = word.data();
            const char* last = word.data() + word.size();
            auto [end, ec] = std::from_chars(first, last, id);
            const bool integer = end == last && (ec == std::errc() || ec == std::errc::result_out_of_range);
            if (!integer)
                return makeError(where + inQuotes(clipped(word)) + " is not a token id (a non-negative integer)");
            if (word[0] == '-') return makeError(where + "negative token id " + inQuotes(clipped(word)));
            if (ec != std::errc()) return makeError(where + inQuotes(clipped(word)) + " is too large for a token id");
            file.ids.push_back(id);
        }
    }
    return file;
}

}  // namespace

std::int64_t tokenStreamBytes(const std::string& path, std::int64_t tokens) {
    const std::int64_t perToken = isBin(path) ? 2 : 24;
    const std::int64_t most = limits::kMaxFileBytes;
    if (tokens >= most / perToken) return most;
    // In whole MiB, as the reader states its limit, and at least one: a small token file piped
    // in whole (`--tokens <(cat ids.txt)`) still reads, and /dev/zero stops within a millisecond.
    constexpr std::int64_t kMiB = 1 << 20;
    return (std::max<std::int64_t>(tokens, 1) * perToken + kMiB - 1) / kMiB * kMiB;
}

Result<TokenFile> readTokenFile(const std::string& path, std::int64_t streamBytes) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return makeError("token file " + inQuotes(path) + " is a directory");
    // A regular file is judged by its size before it is read; anything else is read up to what
    // the run can use (TokenFile.h).
    const bool regular = std::filesystem::is_regular_file(path, ec);
    const std::int64_t limit = regular ? limits::kMaxFileBytes : std::min(streamBytes, limits::kMaxFileBytes);
    auto read = readTextFile(path, limit);
    if (!read) {
        // The reader's line starts with the path; this one names the file as the others here do.
        std::string why = read.error().message;
        if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
        why = "cannot read token file " + inQuotes(path) + ": " + why;
        if (!regular && std::filesystem::exists(path, ec))
            why += " (a pipe or device is read up to what this run can use)";
        return makeError(why);
    }
    const std::string& content = *read;

    TokenFile file;
    file.path = path;
    auto parsed = isBin(path) ? parseBin(std::move(file), content) : parseText(std::move(file), content);
    if (!parsed) return parsed;
    if (parsed->ids.empty()) return makeError("token file " + inQuotes(path) + " has no tokens");
    parsed->max_id = *std::max_element(parsed->ids.begin(), parsed->ids.end());
    return parsed;
}

Result<bool> TokenFile::checkSamples(std::int64_t count, int seq, int vocab) const {
    // Sample i starts at (i · (seq + 1)) mod (n − seq): past n − seq indices the offsets repeat,
    // so no more than that many need a look however many the run reads.
    const auto starts = static_cast<std::int64_t>(ids.size()) - seq;
    const std::int64_t distinct = starts > 0 ? std::min(count, starts) : std::min<std::int64_t>(count, 1);
    for (std::int64_t index = 0; index < distinct; ++index)
        if (auto read = sample(index, seq, vocab); !read) return read.error();
    return true;
}

Result<std::vector<std::int64_t>> TokenFile::sample(std::int64_t index, int seq, int vocab) const {
    if (seq <= 0 || vocab <= 0)
        return makeError("token file " + inQuotes(path) + ": seq (" + std::to_string(seq) + ") and vocab (" +
                         std::to_string(vocab) + ") must be positive");
    const auto n = static_cast<std::int64_t>(ids.size());
    const std::int64_t length = static_cast<std::int64_t>(seq) + 1;
    if (n < length)
        return makeError("token file " + inQuotes(path) + " needs at least " + std::to_string(length) +
                         " tokens for seq=" + std::to_string(seq) + ", has " + std::to_string(n));
    const auto starts = static_cast<std::uint64_t>(n - seq);  // offsets 0 .. n-seq-1 fit a sample
    // Wrap a negative index to its non-negative representative first.
    const auto wrapped =
        static_cast<std::uint64_t>(((index % static_cast<std::int64_t>(starts)) + static_cast<std::int64_t>(starts)) %
                                   static_cast<std::int64_t>(starts));
    const auto offset = static_cast<std::int64_t>(mulMod(wrapped, static_cast<std::uint64_t>(length), starts));
    std::vector<std::int64_t> out(ids.begin() + offset, ids.begin() + offset + length);
    for (std::int64_t i = 0; i < length; ++i)
        if (out[i] >= vocab)
            return makeError("token " + std::to_string(out[i]) + " at position " + std::to_string(offset + i) + " of " +
                             inQuotes(path) + " is outside the model's vocabulary of " + std::to_string(vocab) +
                             "; use --model vocab=" + std::to_string(std::max(max_id, out[i]) + 1) + " or more");
    return out;
}

}  // namespace mario::exec
