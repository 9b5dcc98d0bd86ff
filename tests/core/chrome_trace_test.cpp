// Chrome trace export: exact events for a hand-timed two-device plan, so that a change in the
// layout (units, categories, flow pairing) shows up as a failing assertion, not in Perfetto.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/ChromeTrace.h"

namespace mario {
namespace {

using nlohmann::json;

Instruction action(const char* text) { return parseAction(text).value(); }

struct Step {
    const char* action;
    double start, end;
};

// Builds a plan and a result whose timings are written next to each instruction.
void addDevice(Plan& plan, SimResult& result, int index, const std::vector<Step>& steps) {
    DeviceProgram program{index, {}};
    DeviceStats stats;
    stats.index = index;
    for (const auto& step : steps) {
        program.program.push_back(action(step.action));
        stats.timings.push_back({step.start, step.end});
    }
    plan.devices.push_back(program);
    result.devices.push_back(stats);
}

// Two stages, two micro-batches. Stage 0 checkpoints micro-batch 0 (0R0 follows 0F0) but not
// micro-batch 1; 0RECV_B0 waits 1.5 ms and 1RECV_F0 1 ms, the other RECVs do not wait.
struct Fixture {
    Plan plan;
    SimResult result;
    Fixture() {
        plan.info.name = "demo";
        plan.stages = {StageSpec{0, 0, {}, {}}, StageSpec{1, 1, {}, {}}};
        addDevice(plan, result, 0,
                  {{"0F0", 0, 1},
                   {"0SEND_F0", 1, 1},
                   {"0F1", 1, 2.5},
                   {"0SEND_F1", 2.5, 2.5},
                   {"0RECV_B0", 2.5, 4},
                   {"0R0", 4, 5},
                   {"0B0", 5, 7},
                   {"0RECV_B1", 7, 7},
                   {"0B1", 7, 9},
                   {"0OPT", 9, 9.5}});
        addDevice(plan, result, 1,
                  {{"1RECV_F0", 0, 1},
                   {"1F0", 1, 2},
                   {"1B0", 2, 4},
                   {"1SEND_B0", 4, 4},
                   {"1RECV_F1", 4, 4},
                   {"1F1", 4, 5},
                   {"1B1", 5, 7},
                   {"1SEND_B1", 7, 7}});
        result.devices[0].memory = {{0, 100}, {1, 250.5}};
    }
};

std::vector<json> eventsWith(const json& trace, const std::string& phase) {
    std::vector<json> found;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == phase) found.push_back(e);
    return found;
}

const json* findEvent(const json& trace, const std::string& phase, const std::string& name) {
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == phase && e["name"] == name) return &e;
    return nullptr;
}

TEST(ChromeTrace, ComputeEventsHaveMicrosecondTimesAndKinds) {
    Fixture f;
    const json trace = chromeTrace(f.plan, f.result);
    EXPECT_EQ(trace["displayTimeUnit"], "ms");

    struct Expected {
        const char* name;
        int tid;
        double ts, dur;
        const char* cat;
    };
    const std::vector<Expected> expected = {
        {"0F0", 1, 0, 1000, "forward (checkpointed)"},
        {"0F1", 1, 1000, 1500, "forward"},
        {"wait 0RECV_B0", 1, 2500, 1500, "wait"},
        {"0R0", 1, 4000, 1000, "recompute"},
        {"0B0", 1, 5000, 2000, "backward"},
        {"0B1", 1, 7000, 2000, "backward"},
        {"0OPT", 1, 9000, 500, "optimizer"},
        {"wait 1RECV_F0", 2, 0, 1000, "wait"},
        {"1F0", 2, 1000, 1000, "forward"},
        {"1B0", 2, 2000, 2000, "backward"},
        {"1F1", 2, 4000, 1000, "forward"},
        {"1B1", 2, 5000, 2000, "backward"},
    };
    const auto complete = eventsWith(trace, "X");
    ASSERT_EQ(complete.size(), expected.size());  // zero-length waits are not slices
    for (std::size_t i = 0; i < expected.size(); ++i) {
        SCOPED_TRACE(expected[i].name);
        EXPECT_EQ(complete[i]["name"], expected[i].name);
        EXPECT_EQ(complete[i]["pid"], kChromeTracePid);
        EXPECT_EQ(complete[i]["tid"], expected[i].tid);
        EXPECT_DOUBLE_EQ(complete[i]["ts"].get<double>(), expected[i].ts);
        EXPECT_DOUBLE_EQ(complete[i]["dur"].get<double>(), expected[i].dur);
        EXPECT_EQ(complete[i]["cat"], expected[i].cat);
    }

    const json* b0 = findEvent(trace, "X", "0B0");
    ASSERT_NE(b0, nullptr);
    EXPECT_EQ((*b0)["args"], (json{{"stage", 0}, {"microbatch", 0}, {"device", 0}, {"program_index", 6}}));
    const json* opt = findEvent(trace, "X", "0OPT");
    ASSERT_NE(opt, nullptr);
    EXPECT_FALSE((*opt)["args"].contains("microbatch"));  // OPT has no micro-batch
}

TEST(ChromeTrace, NamesTheProcessAndOneThreadPerDevice) {
    Fixture f;
    const json trace = chromeTrace(f.plan, f.result);
    std::set<std::pair<int, std::string>> threadNames;
    std::set<std::pair<int, int>> sortIndices;
    std::string processName;
    for (const auto& e : eventsWith(trace, "M")) {
        const int tid = e["tid"].get<int>();
        if (e["name"] == "thread_name") threadNames.emplace(tid, e["args"]["name"].get<std::string>());
        if (e["name"] == "thread_sort_index") sortIndices.emplace(tid, e["args"]["sort_index"].get<int>());
        if (e["name"] == "process_name") processName = e["args"]["name"].get<std::string>();
    }
    EXPECT_EQ(processName, "Mario plan demo");
    EXPECT_EQ(threadNames, (std::set<std::pair<int, std::string>>{{1, "device 0"}, {2, "device 1"}}));
    EXPECT_EQ(sortIndices, (std::set<std::pair<int, int>>{{1, 0}, {2, 1}}));
}

TEST(ChromeTrace, SendsAreInstantsAndFlowsJoinEachSendToItsRecv) {
    Fixture f;
    const json trace = chromeTrace(f.plan, f.result);
    const json* send = findEvent(trace, "i", "0SEND_F1");
    ASSERT_NE(send, nullptr);
    EXPECT_EQ((*send)["s"], "t");
    EXPECT_DOUBLE_EQ((*send)["ts"].get<double>(), 2500);
    // A RECV that does not wait is an instant too, so the flow has something to end on.
    const json* recv = findEvent(trace, "i", "1RECV_F1");
    ASSERT_NE(recv, nullptr);
    EXPECT_EQ((*recv)["cat"], "recv");

    // Each flow id joins one start and one end; pairs are then looked up by the SEND name.
    struct End {
        int tid;
        double ts;
    };
    std::map<int, std::pair<json, json>> byId;
    for (const auto& e : eventsWith(trace, "s")) byId[e["id"]].first = e;
    for (const auto& e : eventsWith(trace, "f")) {
        byId[e["id"]].second = e;
        EXPECT_EQ(e["bp"], "e");
    }
    ASSERT_EQ(byId.size(), 4u);
    std::map<std::string, std::pair<End, End>> pairs;
    for (const auto& [id, ends] : byId) {
        ASSERT_FALSE(ends.first.is_null()) << "flow " << id << " has no start";
        ASSERT_FALSE(ends.second.is_null()) << "flow " << id << " has no end";
        EXPECT_EQ(ends.first["name"], ends.second["name"]);
        EXPECT_EQ(ends.first["cat"], ends.second["cat"]);
        pairs[ends.first["name"]] = {{ends.first["tid"], ends.first["ts"]}, {ends.second["tid"], ends.second["ts"]}};
    }
    auto check = [&](const char* name, End from, End to) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(pairs.count(name));
        EXPECT_EQ(pairs[name].first.tid, from.tid);
        EXPECT_DOUBLE_EQ(pairs[name].first.ts, from.ts);
        EXPECT_EQ(pairs[name].second.tid, to.tid);
        EXPECT_DOUBLE_EQ(pairs[name].second.ts, to.ts);  // at the arrival
    };
    check("0SEND_F0", {1, 1000}, {2, 1000});
    check("0SEND_F1", {1, 2500}, {2, 4000});
    check("1SEND_B0", {2, 4000}, {1, 4000});
    check("1SEND_B1", {2, 7000}, {1, 7000});
}

TEST(ChromeTrace, FlowsFollowThePipelineChains) {
    // Chimera-like: chain [2, 3] runs from device 1 to device 0. Stage 3 is the last of its
    // chain, so its SEND_F (which a valid plan would not have) gets no flow.
    Plan plan;
    SimResult result;
    plan.pipelines = {{0, 1}, {2, 3}};
    plan.stages = {StageSpec{0, 0, {}, {}}, StageSpec{1, 1, {}, {}}, StageSpec{2, 1, {}, {}}, StageSpec{3, 0, {}, {}}};
    addDevice(plan, result, 0, {{"3RECV_F0", 0, 2}, {"3F0", 2, 3}, {"3SEND_F0", 3, 3}});
    addDevice(plan, result, 1, {{"2F0", 0, 1}, {"2SEND_F0", 1, 1}});
    const json trace = chromeTrace(plan, result);
    const auto starts = eventsWith(trace, "s");
    const auto ends = eventsWith(trace, "f");
    ASSERT_EQ(starts.size(), 1u);
    ASSERT_EQ(ends.size(), 1u);
    EXPECT_EQ(starts[0]["name"], "2SEND_F0");
    EXPECT_EQ(starts[0]["tid"], chromeTraceTid(1));
    EXPECT_EQ(ends[0]["tid"], chromeTraceTid(0));
    EXPECT_EQ(starts[0]["id"], ends[0]["id"]);
}

TEST(ChromeTrace, MemoryCurveBecomesCounterEventsPerDevice) {
    Fixture f;
    const json trace = chromeTrace(f.plan, f.result);
    const auto counters = eventsWith(trace, "C");
    ASSERT_EQ(counters.size(), 2u);
    EXPECT_EQ(counters[0]["name"], "memory");
    EXPECT_EQ(counters[0]["id"], "device 0");
    EXPECT_EQ(counters[0]["tid"], chromeTraceTid(0));
    EXPECT_DOUBLE_EQ(counters[1]["ts"].get<double>(), 1000);
    EXPECT_DOUBLE_EQ(counters[1]["args"]["bytes"].get<double>(), 250.5);
}

TEST(ChromeTrace, DeadlockedDevicesStopAtTheBlockedInstruction) {
    Fixture f;
    f.result.deadlocked = true;
    f.result.blocked = {BlockedDevice{1, 4, action("1RECV_F1"), "0SEND_F1"}};
    const json trace = chromeTrace(f.plan, f.result);
    EXPECT_NE(findEvent(trace, "X", "1B0"), nullptr);
    EXPECT_EQ(findEvent(trace, "X", "1F1"), nullptr);
    EXPECT_EQ(findEvent(trace, "i", "1RECV_F1"), nullptr);
    EXPECT_EQ(findEvent(trace, "i", "1SEND_B1"), nullptr);
}

TEST(ChromeTrace, EveryEventIsWellFormed) {
    Fixture f;
    const json trace = chromeTrace(f.plan, f.result);
    ASSERT_TRUE(trace["traceEvents"].is_array());
    for (const auto& e : trace["traceEvents"]) {
        SCOPED_TRACE(e.dump());
        ASSERT_TRUE(e.contains("ph") && e["ph"].is_string());
        ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer());
        ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer());
        // Perfetto treats pid/tid 0 as the kernel's idle task.
        EXPECT_NE(e["pid"], 0);
        EXPECT_NE(e["tid"], 0);
        ASSERT_TRUE(e.contains("ts") && e["ts"].is_number());
        EXPECT_GE(e["ts"].get<double>(), 0);
        if (e["ph"] == "X") {
            EXPECT_GE(e["dur"].get<double>(), 0);
        }
    }
}

TEST(ChromeTrace, WritesParseableJsonAndNamesBadPaths) {
    Fixture f;
    const auto path =
        std::filesystem::temp_directory_path() / ("mario_chrome_trace_test_" + std::to_string(::getpid()) + ".json");
    auto written = writeChromeTrace(f.plan, f.result, path.string());
    ASSERT_TRUE(written.ok()) << written.error().message;
    std::ifstream in(path);
    const json parsed = json::parse(in, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(parsed.is_discarded());
    EXPECT_EQ(parsed, chromeTrace(f.plan, f.result));
    std::filesystem::remove(path);

    const std::string bad = "/nonexistent-dir/trace.json";
    auto failed = writeChromeTrace(f.plan, f.result, bad);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().message.find(bad), std::string::npos);

    f.result.devices.pop_back();
    auto mismatched = writeChromeTrace(f.plan, f.result, path.string());
    ASSERT_FALSE(mismatched.ok());
    EXPECT_NE(mismatched.error().message.find(path.string()), std::string::npos);
}

}  // namespace
}  // namespace mario
