#pragma once
// Text from a file as an error message shows it. A message is one line (docs/exit-codes.md), but
// what a user hands the tools may hold anything: a CSV cell with a bare carriage return moved
// the terminal's cursor back over the message, binary bytes printed as mojibake or terminal
// escapes (issue 30). Every message that echoes a file's text passes it through here.
#include <cstddef>
#include <string>
#include <string_view>

namespace mario {

// `text` with every byte that could break the line or the terminal written as an escape: \r, \n
// and \t by name, other control bytes (below 0x20, and 0x7F) and bytes that are not part of
// well-formed UTF-8 as \xNN, the C1 controls (U+0080 to U+009F) as \u0080. Well-formed UTF-8
// (accented names, CJK) is kept as it is.
std::string escapedForMessage(std::string_view text);

// escapedForMessage(text) in double quotes, cut to at most `limit` characters inside them
// (the last three "..." when cut, never in the middle of an escape): a megabyte cell must not
// become a megabyte message.
std::string quotedForMessage(std::string_view text, std::size_t limit = 40);

}  // namespace mario
