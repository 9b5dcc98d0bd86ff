#include "core/io/JsonScan.h"

#include <bit>
#include <limits>
#include <new>
#include <vector>

#include <nlohmann/json.hpp>

namespace mario {
namespace {

using json = nlohmann::json;

// glibc's malloc chunk for a request of `bytes`: the request plus its 8-byte header, rounded up
// to 16 bytes, at least 32 (malloc/malloc.c, request2size with MINSIZE 32).
constexpr std::uint64_t chunk(std::uint64_t bytes) { return bytes + 8 <= 32 ? 32 : (bytes + 8 + 15) / 16 * 16; }

// A std::string's own heap buffer: none up to 15 characters (libstdc++'s short string).
constexpr std::uint64_t stringBuffer(std::size_t length) { return length > 15 ? chunk(length + 1) : 0; }

constexpr std::uint64_t kValue = 16;               // sizeof(nlohmann::json)
constexpr std::uint64_t kObject = chunk(48);       // std::map<std::string, json>
constexpr std::uint64_t kMember = chunk(32 + 48);  // a map node: tree links, the key, the value
constexpr std::uint64_t kArray = chunk(24);        // std::vector<json>
constexpr std::uint64_t kString = chunk(32);       // std::string
constexpr std::uint64_t kNesting = 8;              // a pointer on the DOM parser's stack
constexpr std::uint32_t kInObject = std::numeric_limits<std::uint32_t>::max();

// nlohmann's SAX interface (json_sax): every event adds to the estimate, and returning false
// stops the parser, so the scan's own memory (the stack of open containers, 4 bytes a level)
// stays a fraction of the budget however the text nests.
class Estimator {
public:
    explicit Estimator(JsonScan& scan, std::uint64_t budget) : scan_(scan), budget_(budget) {}

    bool null() { return value(0); }
    bool boolean(bool) { return value(0); }
    bool number_integer(json::number_integer_t) { return value(0); }
    bool number_unsigned(json::number_unsigned_t) { return value(0); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(0); }
    bool string(json::string_t& text) { return value(kString + stringBuffer(text.size())); }
    bool binary(json::binary_t&) { return value(0); }  // not in JSON text

    bool start_object(std::size_t) {
        if (!value(kObject)) return false;
        return open(kInObject);
    }
    bool key(json::string_t& name) { return add(kMember + stringBuffer(name.size())); }
    bool end_object() {
        open_.pop_back();
        return true;
    }

    bool start_array(std::size_t) {
        if (!value(kArray)) return false;
        return open(0);
    }
    bool end_array() {
        // The buffer has grown by doubling to the next power of two; its elements' 16 bytes
        // were counted as they came, its capacity beyond them and its chunk's header now.
        const std::uint64_t size = open_.back();
        open_.pop_back();
        return size == 0 || add(chunk(std::bit_ceil(size) * kValue) - size * kValue);
    }

    bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& error) {
        scan_.error_byte = byte;
        scan_.error = error.what();
        return false;
    }

private:
    // A value in its parent: an array's element (its 16 bytes in the buffer), an object's
    // member (its 16 bytes are in the node key() counted), or the root.
    bool value(std::uint64_t bytes) {
        ++scan_.values;
        if (open_.empty()) bytes += kValue;
        else if (open_.back() != kInObject) {
            if (open_.back() < kInObject - 1) ++open_.back();  // a 256 MiB text cannot get near
            bytes += kValue;
        }
        return add(bytes);
    }

    // The DOM parser keeps a pointer per open container; that stack's deepest level counts.
    bool open(std::uint32_t entry) {
        open_.push_back(entry);
        if (open_.size() <= deepest_) return true;
        deepest_ = open_.size();
        return add(kNesting);
    }

    bool add(std::uint64_t bytes) {
        scan_.bytes += bytes;
        if (scan_.bytes <= budget_) return true;
        scan_.over_budget = true;
        return false;
    }

    JsonScan& scan_;
    std::uint64_t budget_;
    std::vector<std::uint32_t> open_;  // per open container: an array's size so far, or kInObject
    std::size_t deepest_ = 0;
};

}  // namespace

JsonScan scanJson(std::string_view text, std::uint64_t budgetBytes) {
    JsonScan scan;
    Estimator estimator(scan, budgetBytes);
    try {
        json::sax_parse(text.begin(), text.end(), &estimator, json::input_format_t::json, /*strict=*/true,
                        /*ignore_comments=*/true);
    } catch (const std::bad_alloc&) {
        scan.over_budget = true;  // the stack of open containers did not fit: the DOM would not
    }
    return scan;
}

}  // namespace mario
