#pragma once
// Export of a simulated plan as a Chrome Trace Event Format document, so that a schedule can
// be inspected in Perfetto (ui.perfetto.dev, legacy JSON importer) or chrome://tracing next
// to real profiler traces.
//
// Layout: one process ("Mario plan <name>"), one thread per device, named "device N".
// - compute instructions are complete events ("X"); name = action string ("2F5"), cat = kind
//   ("forward", "forward (checkpointed)", "recompute", "backward", "backward-input",
//   "backward-weight", "reduce-grad", "optimizer"), args = stage, microbatch, device,
//   program_index;
// - a RECV that waits becomes an "X" event of cat "wait" named "wait 2RECV_B5"; a RECV that
//   does not wait becomes an instant event of cat "recv" (so that its flow arrow has a slice
//   to end on);
// - a SEND is a thread-scoped instant event ("ph":"i","s":"t") of cat "send";
// - every SEND whose RECV exists gets a flow arrow ("s" at the send, "f" with "bp":"e" at the
//   arrival), both named after the SEND and of cat "transfer";
// - the memory curve, when the result has one, becomes counter events named "memory" with
//   "id" "device N" and args {"bytes": ...}: counters are keyed by process and name, so the id
//   keeps the devices' curves apart (Perfetto shows "memory id: device N bytes").
// Times are microseconds (ms * 1000), as the format requires; "displayTimeUnit" is "ms".
#include <string>

#include <nlohmann/json.hpp>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

// pid 0 and tid 0 are the Linux idle process/thread ("swapper"), which Perfetto treats
// specially, so the trace uses pid 1 and tid = device index + 1. Thread names and the
// "device" arg carry the real device index.
inline constexpr int kChromeTracePid = 1;
constexpr int chromeTraceTid(int deviceIndex) { return deviceIndex + 1; }

// The whole trace document: {"displayTimeUnit":"ms","traceEvents":[...]}.
// result.devices[d] describes plan.devices[d] (matched by device index instead when the counts
// differ). Instructions without a timing, and on a deadlocked result those from the blocked
// instruction on, are left out.
nlohmann::json chromeTrace(const Plan& plan, const SimResult& result);

// Writes chromeTrace() to `path`, one event per line. Fails (naming the path) when the file
// cannot be written or when `result` has a different number of devices than `plan`.
Result<bool> writeChromeTrace(const Plan& plan, const SimResult& result, const std::string& path);

}  // namespace mario
