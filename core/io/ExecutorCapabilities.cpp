#include "core/io/ExecutorCapabilities.h"

#include <nlohmann/json.hpp>

#include "core/io/JsonFieldReader.h"

namespace mario {

using nlohmann::json;
using Need = JsonFieldReader::Need;
using Check = JsonFieldReader::Check;

std::string writeExecutorCapabilities(const ExecutorCapabilities& c) {
    json line{{"cuda", c.cuda},        {"devices", c.devices}, {"partition_sms", c.partition_sms},
              {"nccl", c.nccl},        {"version", c.version}, {"torch", c.torch},
              {"protocol", c.protocol}};
    if (!c.cuda_reason.empty()) line["cuda_reason"] = c.cuda_reason;
    if (!c.partition_reason.empty()) line["partition_reason"] = c.partition_reason;
    return line.dump();
}

Result<ExecutorCapabilities> parseExecutorCapabilities(std::string_view line) {
    const json node = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (node.is_discarded() || !node.is_object()) {
        std::string cut(line.substr(0, 60));
        if (line.size() > 60) cut += "...";
        return makeError("executor capabilities: expected one JSON object, got \"" + cut + "\"");
    }
    JsonFieldReader in(node, "");
    ExecutorCapabilities c;
    in.boolean("cuda", c.cuda, Need::Required);
    in.integer("devices", c.devices, Need::Required, Check::NonNegative);
    in.boolean("partition_sms", c.partition_sms, Need::Required);
    in.boolean("nccl", c.nccl, Need::Required);
    in.string("version", c.version, Need::Required);
    in.string("torch", c.torch, Need::Optional);
    in.integer("protocol", c.protocol, Need::Optional, Check::NonNegative);
    in.string("cuda_reason", c.cuda_reason, Need::Optional);
    in.string("partition_reason", c.partition_reason, Need::Optional);
    if (!in.ok()) return makeError("executor capabilities: " + in.error()->message);
    return c;
}

}  // namespace mario
