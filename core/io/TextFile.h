#pragma once
// Whole-file reads and writes for every file the tools open or write as text. Reads refuse
// files above limits::kMaxFileBytes before allocating, so a hostile size fails in one line.
#include <string>

#include "core/util/Result.h"

namespace mario {

// The file's bytes; errors start with the path.
Result<std::string> readTextFile(const std::string& path);

// Replaces the file with `text`; `what` names the content in errors ("the pipelining CSV").
Result<bool> writeTextFile(const std::string& path, const std::string& text, const std::string& what);

}  // namespace mario
