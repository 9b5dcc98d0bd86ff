#pragma once
// The one reader and the one writer for every file the tools read or write (CLI, window,
// executor): docs/limits.md#files says the rules to users.
//
// Reading: a regular file above the limit is refused before anything is allocated; anything
// else (a pipe, /dev/stdin, a device) is read up to the limit and refused when more comes, so
// /dev/zero costs one limit's worth of memory, not all of it; a directory is named as one.
//
// Writing: what the user named is what gets written, and nothing is lost on the way.
// - A regular file (or a path that does not exist yet) is replaced atomically: the text goes to
//   a temporary file beside it, which is renamed over it only once it is whole, keeping the old
//   file's permissions. A write error (full disk, quota) leaves the old file as it was and
//   removes the temporary one.
// - A symbolic link is followed: the file it names is replaced, the link stays a link.
// - A device, FIFO or socket (`-o /dev/null`, `-o /dev/stdout`, `-o >(gzip > x.gz)`) is
//   written through, never replaced by a regular file.
// - A directory is refused.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/model/Limits.h"
#include "core/util/Result.h"

namespace mario {

// The file's bytes; errors start with the path. The limit is a parameter for the executor's
// token files and for tests; everything else reads with the default.
Result<std::string> readTextFile(const std::string& path, std::int64_t limitBytes = limits::kMaxFileBytes);

struct WriteOptions {
    // A launch script: a new one is created 0777 less the umask (0755 under the usual 022), as a
    // compiler creates programs; a replaced one gains execute wherever it could be read.
    bool executable = false;
};

// Writes `text` to `path` by the rules above; `what` names the content in errors ("the
// pipelining CSV"). Errors are one line naming the path and the system's reason.
Result<bool> writeTextFile(const std::string& path, std::string_view text, const std::string& what,
                           WriteOptions options = {});

}  // namespace mario
