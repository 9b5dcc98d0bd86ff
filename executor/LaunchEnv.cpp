#include "executor/LaunchEnv.h"

#include <charconv>
#include <string_view>

namespace mario::exec {
namespace {

using Getenv = std::function<const char*(const char*)>;

// An unset variable and an empty one mean the same: shells and Slurm scripts often export a
// variable with an empty value (`export MASTER_PORT=`) when the source of it was unset.
std::optional<std::string> lookup(const Getenv& getenv, const char* name) {
    const char* value = getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

// The whole text must be a decimal integer: "4 " or "4x" are typos we report, not silently read
// as 4 the way atoi would.
std::optional<int> parseInt(const std::string& text) {
    int value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    return value;
}

Result<int> requireInt(const Getenv& getenv, const char* name, const std::string& why) {
    auto text = lookup(getenv, name);
    if (!text) return makeError(std::string(name) + " is not set" + why);
    auto value = parseInt(*text);
    if (!value) return makeError(std::string(name) + "=" + *text + " is not an integer");
    return *value;
}

Result<int> parsePort(const char* name, const std::string& text) {
    auto value = parseInt(text);
    if (!value) return makeError(std::string(name) + "=" + text + " is not an integer");
    if (*value < 1 || *value > 65535) return makeError(std::string(name) + "=" + text + " is not a port (1..65535)");
    return *value;
}

}  // namespace

Result<std::optional<LaunchEnv>> readLaunchEnv(const Getenv& getenv) {
    if (!lookup(getenv, "WORLD_SIZE")) return std::optional<LaunchEnv>();

    const std::string launcher = " (torchrun and the project's srun script set it for every process)";
    LaunchEnv env;
    auto world = requireInt(getenv, "WORLD_SIZE", launcher);
    if (!world) return world.error();
    env.world_size = *world;
    if (env.world_size < 1) return makeError("WORLD_SIZE=" + std::to_string(env.world_size) + " is below 1");

    auto rank = requireInt(getenv, "RANK", " but WORLD_SIZE=" + std::to_string(env.world_size) + launcher);
    if (!rank) return rank.error();
    env.rank = *rank;
    if (env.rank < 0) return makeError("RANK=" + std::to_string(env.rank) + " is negative");
    if (env.rank >= env.world_size)
        return makeError("RANK=" + std::to_string(env.rank) +
                         " is not below WORLD_SIZE=" + std::to_string(env.world_size));

    if (auto local = lookup(getenv, "LOCAL_RANK")) {
        auto value = parseInt(*local);
        if (!value) return makeError("LOCAL_RANK=" + *local + " is not an integer");
        if (*value < 0) return makeError("LOCAL_RANK=" + *local + " is negative");
        env.local_rank = *value;
    }

    // A single process needs no rendezvous, so a world of one runs without MASTER_ADDR/PORT
    // (e.g. `WORLD_SIZE=1 RANK=0 mario-executor ...` by hand).
    const bool needsMaster = env.world_size > 1;
    if (auto addr = lookup(getenv, "MASTER_ADDR")) {
        env.master_addr = *addr;
    } else if (needsMaster) {
        return makeError("MASTER_ADDR is not set but WORLD_SIZE=" + std::to_string(env.world_size) + launcher);
    }
    if (auto port = lookup(getenv, "MASTER_PORT")) {
        auto value = parsePort("MASTER_PORT", *port);
        if (!value) return value.error();
        env.master_port = *value;
    } else if (needsMaster) {
        return makeError("MASTER_PORT is not set but WORLD_SIZE=" + std::to_string(env.world_size) + launcher);
    }

    env.use_agent_store = lookup(getenv, "TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
    if (auto restarts = lookup(getenv, "TORCHELASTIC_RESTART_COUNT")) {
        auto value = parseInt(*restarts);
        if (!value || *value < 0)
            return makeError("TORCHELASTIC_RESTART_COUNT=" + *restarts + " is not a count (0, 1, ...)");
        env.restart_count = *value;
    }

    return std::optional<LaunchEnv>(std::move(env));
}

}  // namespace mario::exec
