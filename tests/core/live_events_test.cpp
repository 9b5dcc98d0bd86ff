// The live-event protocol (core/io/LiveEvents.h): every event survives writer → parser, the
// wire format stays what readers of protocol 1 expect, and a line that is not an event of this
// protocol fails with one message that says what is wrong with it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <variant>

#include "core/io/LiveEvents.h"

namespace mario {
namespace {

template <class Event>
Event roundTrip(const Event& event) {
    const std::string line = writeLiveEvent(event);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;  // one event, one line
    auto parsed = parseLiveEvent(line);
    EXPECT_TRUE(parsed.ok()) << line << ": " << (parsed ? "" : parsed.error().message);
    if (!parsed) return {};
    EXPECT_TRUE(std::holds_alternative<Event>(*parsed)) << line;
    if (!std::holds_alternative<Event>(*parsed)) return {};
    return std::get<Event>(*parsed);
}

std::string errorOf(std::string_view line) {
    auto parsed = parseLiveEvent(line);
    EXPECT_FALSE(parsed.ok()) << line;
    return parsed ? std::string() : parsed.error().message;
}

TEST(LiveEvents, HelloRoundTrips) {
    const LiveHello hello{kLiveEventProtocol, "cuda", "layers=4,hidden=16", 4, 96};
    const LiveHello back = roundTrip(hello);
    EXPECT_EQ(back.protocol, kLiveEventProtocol);
    EXPECT_EQ(back.backend, "cuda");
    EXPECT_EQ(back.model, "layers=4,hidden=16");
    EXPECT_EQ(back.devices, 4);
    EXPECT_EQ(back.instructions, 96u);
    EXPECT_TRUE(checkLiveProtocol(back).ok());
}

TEST(LiveEvents, InstructionRoundTripsWithAndWithoutAllocatorReadings) {
    LiveInstruction cpu{1, 2, 1, 17, "3B5", 4096.5, std::nullopt, std::nullopt, 1250.25, 1830.75};
    const LiveInstruction back = roundTrip(cpu);
    EXPECT_EQ(back.iteration, 1);
    EXPECT_EQ(back.device, 2);
    EXPECT_EQ(back.replica, 1);
    EXPECT_EQ(back.index, 17u);
    EXPECT_EQ(back.instruction, "3B5");
    EXPECT_DOUBLE_EQ(back.activation_bytes, 4096.5);
    EXPECT_FALSE(back.allocated_bytes.has_value());
    EXPECT_FALSE(back.peak_allocated_bytes.has_value());
    EXPECT_DOUBLE_EQ(back.start_us, 1250.25);
    EXPECT_DOUBLE_EQ(back.end_us, 1830.75);

    LiveInstruction gpu = cpu;
    gpu.allocated_bytes = 1e9;
    gpu.peak_allocated_bytes = 2.5e9;
    const LiveInstruction gpuBack = roundTrip(gpu);
    ASSERT_TRUE(gpuBack.allocated_bytes && gpuBack.peak_allocated_bytes);
    EXPECT_DOUBLE_EQ(*gpuBack.allocated_bytes, 1e9);
    EXPECT_DOUBLE_EQ(*gpuBack.peak_allocated_bytes, 2.5e9);
}

TEST(LiveEvents, IterationRoundTripsAndADivergedLossStaysNaN) {
    const LiveIteration back = roundTrip(LiveIteration{3, 2.75, 41.5, {100, 200, 0}});
    EXPECT_EQ(back.iteration, 3);
    EXPECT_DOUBLE_EQ(back.loss, 2.75);
    EXPECT_DOUBLE_EQ(back.step_ms, 41.5);
    EXPECT_EQ(back.peak_activation_bytes, (std::vector<double>{100, 200, 0}));
    // JSON has no NaN: the writer puts null, which must read back as NaN, not as a bad line.
    const LiveIteration diverged = roundTrip(LiveIteration{0, std::nan(""), 1, {}});
    EXPECT_TRUE(std::isnan(diverged.loss));
}

TEST(LiveEvents, SummaryRoundTripsWithAndWithoutTheReferenceCheck) {
    LiveSummary plain;
    plain.loss = 3.5;
    plain.instructions = 40;
    plain.devices = 4;
    plain.data_parallel = 2;
    plain.world = 8;
    const LiveSummary back = roundTrip(plain);
    EXPECT_DOUBLE_EQ(back.loss, 3.5);
    EXPECT_EQ(back.instructions, 40u);
    EXPECT_EQ(back.devices, 4);
    EXPECT_EQ(back.data_parallel, 2);
    EXPECT_EQ(back.world, 8);
    EXPECT_TRUE(back.step_ms.empty());
    EXPECT_TRUE(back.peak_allocated_bytes.empty());
    EXPECT_FALSE(back.reference.has_value());

    LiveSummary checked = plain;
    checked.step_ms = {10.5, 9.25};
    checked.peak_allocated_bytes = {1e6};
    checked.reference = LiveReferenceCheck{3.5, 1e-14, 2e-15, false};
    const LiveSummary checkedBack = roundTrip(checked);
    EXPECT_EQ(checkedBack.step_ms, checked.step_ms);
    EXPECT_EQ(checkedBack.peak_allocated_bytes, checked.peak_allocated_bytes);
    ASSERT_TRUE(checkedBack.reference.has_value());
    EXPECT_DOUBLE_EQ(checkedBack.reference->loss, 3.5);
    EXPECT_DOUBLE_EQ(checkedBack.reference->max_grad_rel_diff, 1e-14);
    EXPECT_DOUBLE_EQ(checkedBack.reference->max_grad_abs_diff, 2e-15);
    EXPECT_FALSE(checkedBack.reference->grads_match);
}

TEST(LiveEvents, ErrorRoundTrips) {
    EXPECT_EQ(roundTrip(LiveError{"rank 2: no activation from device 1"}).message,
              "rank 2: no activation from device 1");
}

// Protocol 1 as the executor has written it since the protocol began: readers in the field
// (scripts, older workbenches) match these exact lines.
TEST(LiveEvents, TheWireFormatOfProtocolOneIsUnchanged) {
    EXPECT_EQ(writeLiveEvent(LiveHello{1, "cpu", "tiny", 2, 12}),
              R"({"backend":"cpu","devices":2,"event":"hello","instructions":12,"model":"tiny","protocol":1})");
    EXPECT_EQ(writeLiveEvent(LiveInstruction{0, 1, 0, 3, "1F0", 0.0, std::nullopt, std::nullopt, 5.0, 7.5}),
              R"({"activation_bytes":0.0,"device":1,"end_us":7.5,"event":"instruction","index":3,)"
              R"("instruction":"1F0","iteration":0,"replica":0,"start_us":5.0})");
    EXPECT_EQ(writeLiveEvent(LiveIteration{0, 1.5, 2.0, {3.0}}),
              R"({"event":"iteration","iteration":0,"loss":1.5,"peak_activation_bytes":[3.0],"step_ms":2.0})");
    LiveSummary summary;
    summary.loss = 1.5;
    summary.instructions = 12;
    summary.devices = 2;
    EXPECT_EQ(writeLiveEvent(summary), R"({"data_parallel":1,"devices":2,"instructions":12,"loss":1.5,"world":1})");
}

TEST(LiveEvents, AHelloOfAnotherProtocolParsesButIsRefusedNamingBothVersions) {
    // Only the version is read: a later protocol may have changed every other field.
    auto parsed = parseLiveEvent(R"({"event":"hello","protocol":2,"devices":"four"})");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    ASSERT_TRUE(std::holds_alternative<LiveHello>(*parsed));
    const LiveHello& hello = std::get<LiveHello>(*parsed);
    EXPECT_EQ(hello.protocol, 2);
    auto check = checkLiveProtocol(hello);
    ASSERT_FALSE(check.ok());
    EXPECT_NE(check.error().message.find("protocol 2"), std::string::npos) << check.error().message;
    EXPECT_NE(check.error().message.find("protocol 1"), std::string::npos) << check.error().message;

    LiveHello written;
    written.protocol = 7;
    auto back = parseLiveEvent(writeLiveEvent(written));
    ASSERT_TRUE(back.ok());
    EXPECT_FALSE(checkLiveProtocol(std::get<LiveHello>(*back)).ok());
}

TEST(LiveEvents, MalformedLinesSayWhatIsWrong) {
    EXPECT_NE(errorOf("mario-executor: rank 1: boom").find("not a JSON line"), std::string::npos);
    EXPECT_NE(errorOf(R"({"event":"iteration")").find("not a JSON line"), std::string::npos);  // cut short
    EXPECT_NE(errorOf("[1, 2]").find("expected a JSON object"), std::string::npos);
    EXPECT_NE(errorOf(R"({"event":3})").find("event: expected a string"), std::string::npos);

    const std::string unknown = errorOf(R"({"event":"instructoin","device":0})");
    EXPECT_NE(unknown.find("unknown event \"instructoin\""), std::string::npos) << unknown;

    EXPECT_EQ(errorOf(R"({"event":"iteration","iteration":0,"loss":1,"peak_activation_bytes":[]})"),
              "iteration.step_ms: required");
    EXPECT_EQ(errorOf(R"({"event":"iteration","iteration":0,"loss":1,"step_ms":1,"peak_activation_bytes":3})"),
              "iteration.peak_activation_bytes: expected a list of numbers");
    EXPECT_EQ(errorOf(R"({"event":"instruction","iteration":0,"device":-1,"replica":0,"index":0,)"
                      R"("instruction":"0F0","activation_bytes":0,"start_us":0,"end_us":1})"),
              "instruction.device: expected a non-negative integer (got -1)");
    EXPECT_EQ(errorOf(R"({"event":"instruction","iteration":0,"device":0,"replica":0,"index":0,)"
                      R"("instruction":7,"activation_bytes":0,"start_us":0,"end_us":1})"),
              "instruction.instruction: expected a string");
    EXPECT_EQ(errorOf(R"({"event":"hello","protocol":1,"backend":"cpu","devices":2,"instructions":4})"),
              "hello.model: required");
    EXPECT_EQ(errorOf(R"({"event":"hello","protocol":"1"})"), "hello.protocol: expected a positive integer");
    EXPECT_EQ(errorOf(R"({"event":"error"})"), "error.message: required");
    // No "event" key: the summary, whose fields then must be there.
    EXPECT_EQ(errorOf(R"({"status":"ok"})"), "summary.loss: required");
    EXPECT_EQ(errorOf(R"({"loss":1,"instructions":4,"devices":2,"data_parallel":1,"world":1,"reference_loss":1})"),
              "summary.max_grad_rel_diff: required");
}

TEST(LiveEvents, SurroundingWhitespaceAndExtraKeysAreAccepted) {
    // A newer writer of the same protocol may add keys; a reader of a pipe may keep the '\r'.
    auto parsed = parseLiveEvent(
        "  {\"event\":\"iteration\",\"iteration\":1,\"loss\":2,\"step_ms\":3,\"peak_activation_bytes\":[],\"new\":1}\r\n");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(std::get<LiveIteration>(*parsed).iteration, 1);
}

}  // namespace
}  // namespace mario
