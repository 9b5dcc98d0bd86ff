#pragma once
// What a mesh message is, apart from who sent it: the receiver asks for (sender, key) and gets
// the oldest message with exactly that key. Four integers are enough for the executor's
// traffic (e.g. kind = activation, a = stage, b = micro-batch, c = chunk) and keep the wire
// header fixed-size. Kinds below zero are reserved for TcpMesh's own collectives.
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace mario::dist {

struct MessageKey {
    std::int32_t kind = 0;
    std::int32_t a = 0;
    std::int32_t b = 0;
    std::int32_t c = 0;

    auto operator<=>(const MessageKey&) const = default;
};

// "<kind/a/b/c>", the form every mesh error message uses to name a message.
inline std::string describe(const MessageKey& key) {
    // Appended piece by piece: `"<" + std::to_string(...)` trips GCC 12's false -Wrestrict.
    std::string text = "<";
    for (std::int32_t part : {key.kind, key.a, key.b, key.c}) {
        if (text.size() > 1) text += '/';
        text += std::to_string(part);
    }
    return text += '>';
}

}  // namespace mario::dist
