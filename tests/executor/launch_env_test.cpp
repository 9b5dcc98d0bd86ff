// readLaunchEnv (executor/LaunchEnv.h): the variables torchrun and the srun script set, each
// error one line that names the variable and its value.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "executor/LaunchEnv.h"

namespace {

using mario::exec::LaunchEnv;
using mario::exec::readLaunchEnv;
using Vars = std::map<std::string, std::string>;

// A fake environment: the real one is process-wide, and setenv in a test would leak into others.
std::function<const char*(const char*)> envOf(Vars vars) {
    auto owned = std::make_shared<Vars>(std::move(vars));
    return [owned](const char* name) -> const char* {
        auto it = owned->find(name);
        return it == owned->end() ? nullptr : it->second.c_str();
    };
}

Vars fourRanks() {
    return {
        {"WORLD_SIZE", "4"}, {"RANK", "2"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}};
}

LaunchEnv readOk(const Vars& vars) {
    auto env = readLaunchEnv(envOf(vars));
    EXPECT_TRUE(env.ok()) << (env.ok() ? "" : env.error().message);
    if (!env.ok() || !env.value()) {
        ADD_FAILURE() << "expected a launch environment";
        return {};
    }
    return **env;
}

std::string readError(const Vars& vars) {
    auto env = readLaunchEnv(envOf(vars));
    EXPECT_FALSE(env.ok());
    return env.ok() ? std::string() : env.error().message;
}

TEST(LaunchEnv, WithoutWorldSizeItIsASingleProcess) {
    auto env = readLaunchEnv(envOf({{"RANK", "3"}, {"MASTER_PORT", "bad"}}));
    ASSERT_TRUE(env.ok()) << env.error().message;
    EXPECT_FALSE(env->has_value());
    // An exported-but-empty WORLD_SIZE is the same as none.
    auto empty = readLaunchEnv(envOf({{"WORLD_SIZE", ""}}));
    ASSERT_TRUE(empty.ok());
    EXPECT_FALSE(empty->has_value());
}

TEST(LaunchEnv, ReadsTheTorchrunVariables) {
    const LaunchEnv env = readOk(fourRanks());
    EXPECT_EQ(env.rank, 2);
    EXPECT_EQ(env.world_size, 4);
    EXPECT_EQ(env.local_rank, 1);
    EXPECT_EQ(env.master_addr, "node0");
    EXPECT_EQ(env.master_port, 29500);
}

TEST(LaunchEnv, LocalRankDefaultsToZeroAndAWorldOfOneNeedsNoMaster) {
    Vars vars = fourRanks();
    vars.erase("LOCAL_RANK");
    EXPECT_EQ(readOk(vars).local_rank, 0);

    const LaunchEnv single = readOk({{"WORLD_SIZE", "1"}, {"RANK", "0"}});
    EXPECT_EQ(single.world_size, 1);
    EXPECT_EQ(single.master_addr, "");
    EXPECT_EQ(single.master_port, 0);
}

TEST(LaunchEnv, UnderTorchrunsAgentStoreEveryRankJoinsItAtMasterPort) {
    Vars vars = fourRanks();
    EXPECT_FALSE(readOk(vars).use_agent_store);
    vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    vars["TORCHELASTIC_RESTART_COUNT"] = "2";
    const LaunchEnv env = readOk(vars);
    EXPECT_TRUE(env.use_agent_store);
    EXPECT_EQ(env.restart_count, 2);
    EXPECT_EQ(env.master_port, 29500);  // the agent's store itself: no port of our own
    // torch.distributed takes only the exact word "True" (torch/distributed/rendezvous.py).
    vars["TORCHELASTIC_USE_AGENT_STORE"] = "False";
    EXPECT_FALSE(readOk(vars).use_agent_store);
}

TEST(LaunchEnv, EveryErrorIsOneLineNamingTheVariable) {
    struct Case {
        std::string variable;  // the variable the message must name
        std::string value;     // "" to unset it
        std::string expected;  // the message, or a part of it when `exact` is false
        bool exact = true;
    };
    const std::vector<Case> cases = {
        {"WORLD_SIZE", "four", "WORLD_SIZE=four is not an integer"},
        {"WORLD_SIZE", "0", "WORLD_SIZE=0 is below 1"},
        {"RANK", "", "RANK is not set but WORLD_SIZE=4 (torchrun", false},
        {"RANK", "2x", "RANK=2x is not an integer"},
        {"RANK", "-1", "RANK=-1 is negative"},
        {"RANK", "4", "RANK=4 is not below WORLD_SIZE=4"},
        {"LOCAL_RANK", "one", "LOCAL_RANK=one is not an integer"},
        {"LOCAL_RANK", "-2", "LOCAL_RANK=-2 is negative"},
        {"MASTER_ADDR", "", "MASTER_ADDR is not set but WORLD_SIZE=4 (torchrun and the project's srun script", false},
        {"MASTER_PORT", "", "MASTER_PORT is not set but WORLD_SIZE=4 (torchrun and the project's srun script", false},
        {"MASTER_PORT", "0", "MASTER_PORT=0 is not a port (1..65535)"},
        {"MASTER_PORT", "70000", "MASTER_PORT=70000 is not a port (1..65535)"},
        {"MASTER_PORT", "29500 ", "MASTER_PORT=29500  is not an integer"},
        {"TORCHELASTIC_RESTART_COUNT", "-1", "TORCHELASTIC_RESTART_COUNT=-1 is not a count (0, 1, ...)"},
        {"TORCHELASTIC_RESTART_COUNT", "one", "TORCHELASTIC_RESTART_COUNT=one is not a count (0, 1, ...)"},
    };
    for (const Case& c : cases) {
        Vars vars = fourRanks();
        if (c.value.empty()) vars.erase(c.variable);
        else vars[c.variable] = c.value;
        const std::string message = readError(vars);
        if (c.exact) EXPECT_EQ(message, c.expected) << c.variable << "=" << c.value;
        else EXPECT_NE(message.find(c.expected), std::string::npos) << message;
        EXPECT_NE(message.find(c.variable), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    // Under the agent store MASTER_PORT=65535 is a port like any other (no MASTER_PORT+1 any more).
    Vars vars = fourRanks();
    vars["MASTER_PORT"] = "65535";
    vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    EXPECT_EQ(readOk(vars).master_port, 65535);
}

TEST(LaunchEnv, ARankPastTheWorldIsNamedWithBothValues) {
    Vars vars = fourRanks();
    vars["RANK"] = "5";
    EXPECT_EQ(readError(vars), "RANK=5 is not below WORLD_SIZE=4");
}

}  // namespace
