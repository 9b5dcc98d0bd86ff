#include "core/io/TextFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mario {
namespace {

namespace fs = std::filesystem;

// strerror's wording for errno, read before anything else can change it.
std::string reason(int error) { return std::strerror(error); }

// Whole MiB where the limit is one (every limit a user meets), else exact bytes: a small limit
// (a short token file's) must not read "0 MiB".
std::string mib(std::int64_t bytes) {
    return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

// Closes on every path out, so an error return never leaks a descriptor.
class Descriptor {
public:
    explicit Descriptor(int fd) : fd_(fd) {}
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return fd_; }
    // close() reports what a network file system deferred: a write error seen only there.
    int release() {
        const int result = ::close(fd_);
        fd_ = -1;
        return result;
    }

private:
    int fd_;
};

// 0 or the errno of the first failing write.
int writeAll(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

// The file a chain of symbolic links ends at, existing or not (a dangling link names the file
// the user means to create). Relative targets are taken from the link's own folder.
Result<fs::path> followLinks(fs::path path) {
    for (int hop = 0; hop < 40; ++hop) {  // Linux's own limit (ELOOP after 40)
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
        const fs::path target = fs::read_symlink(path, ec);
        if (ec) return makeError("cannot follow the link \"" + path.string() + "\" (" + ec.message() + ")");
        path = target.is_absolute() ? target : path.parent_path() / target;
    }
    return makeError("\"" + path.string() + "\": too many levels of symbolic links");
}

// Writes beside `target`, then renames over it: the old file stays whole until the new one is.
Result<bool> replaceAtomically(const fs::path& target, std::string_view text, const std::string& what,
                               const struct stat* old, bool executable) {
    static std::atomic<unsigned> counter{0};
    const std::string quoted = "\"" + target.string() + "\"";
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    // New files get what the umask allows (0666, or 0777 for a script); a replaced file keeps
    // its own mode, plus execute where read is allowed for a script.
    mode_t mode = executable ? 0777 : 0666;
    fs::path partial;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        partial = folder / ("." + target.filename().string() + ".partial-" + std::to_string(::getpid()) + "-" +
                            std::to_string(counter++));
        fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        // The folder must take a new file; that it holds a writable old one is not enough.
        if (fd < 0 && errno == ENOENT)
            return makeError("cannot write " + what + " to " + quoted + " (no folder \"" + folder.string() + "\")");
        if (fd < 0 && errno != EEXIST)
            return makeError("cannot write " + what + " to " + quoted +
                             " (cannot create a file beside it: " + reason(errno) + ")");
    }
    if (fd < 0) return makeError("cannot write " + what + " to " + quoted + " (no free temporary name beside it)");
    Descriptor file(fd);
    const auto fail = [&](int error) -> Result<bool> {
        ::unlink(partial.c_str());
        return makeError("cannot write " + what + " to " + quoted + " (" + reason(error) + ")");
    };
    if (old) {
        mode_t kept = old->st_mode & 07777;
        if (executable) kept |= (kept & 0444) >> 2;
        // Ownership is only ours to keep as root (anyone else's new file is theirs); where even
        // root cannot hand it back, the file stays root's and loses set-id bits it must not carry.
        if (::geteuid() == 0 && ::fchown(file.get(), old->st_uid, old->st_gid) != 0) kept &= ~mode_t{06000};
        if (::fchmod(file.get(), kept) != 0) return fail(errno);
    }
    if (const int error = writeAll(file.get(), text)) return fail(error);
    // On disk before the rename, or a crash could leave an empty file under the old name.
    if (::fsync(file.get()) != 0 && errno != EINVAL) return fail(errno);
    if (file.release() != 0) return fail(errno);
    if (::rename(partial.c_str(), target.c_str()) != 0) return fail(errno);
    return true;
}

}  // namespace

Result<std::string> readTextFile(const std::string& path, std::int64_t limitBytes) {
    // Opened first and judged by what was opened (fstat), so a path swapped between a check and
    // the read cannot slip past.
    Descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (file.get() < 0) return makeError(path + ": cannot open the file (" + reason(errno) + ")");
    struct stat info {};
    if (::fstat(file.get(), &info) != 0) return makeError(path + ": cannot read the file (" + reason(errno) + ")");
    if (S_ISDIR(info.st_mode)) return makeError(path + ": is a directory, not a file");
    const bool regular = S_ISREG(info.st_mode);
    if (regular && info.st_size > limitBytes)
        return makeError(path + ": the file is " + std::to_string(info.st_size) + " bytes; the limit is " +
                         mib(limitBytes));
    // Read at the size a regular file has (one allocation, not a doubling string holding twice
    // the file for a moment); whatever else comes (a file still growing, a pipe, a device) is
    // read in growing steps, and one byte past the limit ends the read.
    const auto limit = static_cast<std::size_t>(limitBytes);
    std::string text;
    text.resize(regular ? static_cast<std::size_t>(info.st_size) + 1 : std::min<std::size_t>(limit + 1, 64 << 10));
    std::size_t used = 0;
    for (;;) {
        if (used == text.size()) {
            if (used > limit) break;
            text.resize(std::min(limit + 1, text.size() * 2));
        }
        const ssize_t n = ::read(file.get(), text.data() + used, text.size() - used);
        if (n < 0) {
            if (errno == EINTR) continue;
            return makeError(path + ": cannot read the file (" + reason(errno) + ")");
        }
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
    }
    if (used > limit)
        return makeError(path + ": more than " + mib(limitBytes) + " came from it" +
                         (regular ? " (the file grew while it was read)" : " (it is not a regular file)") +
                         "; the limit is " + mib(limitBytes));
    text.resize(used);
    return text;
}

Result<bool> writeTextFile(const std::string& path, std::string_view text, const std::string& what,
                           WriteOptions options) {
    const std::string quoted = "\"" + path + "\"";
    if (path.empty()) return makeError("cannot write " + what + ": no file named");
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        const int error = errno;
        if (error != ENOENT) return makeError("cannot write " + what + " to " + quoted + " (" + reason(error) + ")");
        // Nothing there yet, or a link to nothing yet: create the file the path (or link) names.
        auto target = followLinks(path);
        if (!target) return target.error();
        return replaceAtomically(*target, text, what, nullptr, options.executable);
    }
    if (S_ISDIR(info.st_mode)) return makeError("cannot write " + what + " to " + quoted + ": it is a directory");
    if (S_ISREG(info.st_mode)) {
        // Through any links to the file itself, which is replaced; the links stay links.
        auto target = followLinks(path);
        if (!target) return target.error();
        return replaceAtomically(*target, text, what, &info, options.executable);
    }
    // A device, FIFO or socket is written to, never replaced: there is no old content to keep.
    Descriptor file(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY));
    if (file.get() < 0) return makeError("cannot write " + what + " to " + quoted + " (" + reason(errno) + ")");
    if (const int error = writeAll(file.get(), text))
        return makeError("cannot write " + what + " to " + quoted + " (" + reason(error) + ")");
    if (file.release() != 0) return makeError("cannot write " + what + " to " + quoted + " (" + reason(errno) + ")");
    return true;
}

}  // namespace mario
