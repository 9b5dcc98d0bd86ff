#pragma once
// The one place that includes PyTorch's distributed runtime (c10d) and papers over what differs
// between the LibTorch versions the project builds against: Debian's 1.13 (`ci` preset) and a
// PyTorch 2.x wheel (`torch2` preset). Checked in both trees' headers:
//   - Gloo and NCCL groups derive from c10d::ProcessGroup in 1.13 but from c10d::Backend in 2.x
//     (2.x's ProcessGroup is a dispatcher over backends). Send, recv, allreduce and barrier are
//     virtual on both bases with the same signatures, so the executor holds a `CommGroup`.
//   - c10d::Work::wait(timeout), Work::abort(), TCPStore(host, TCPStoreOptions), PrefixStore and
//     Store::compareSet/add/check/wait exist with the same signatures in both.
//   - ProcessGroupGloo.hpp includes Gloo's own headers, which neither LibTorch ships: they come
//     from Debian's libgloo-dev (the Gloo Debian's LibTorch is linked against; a wheel keeps its
//     Gloo inside libtorch_cpu, and the executor only passes Gloo's device around by pointer).
//     So only CommGroups.cpp includes it, and a build without them (a GPU node) still has NCCL.
#include <exception>
#include <string>

#include <c10/util/Exception.h>
#include <torch/version.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace mario::exec {

#if TORCH_VERSION_MAJOR >= 2
using CommGroup = c10d::Backend;
#else
using CommGroup = c10d::ProcessGroup;
#endif
using CommGroupPtr = c10::intrusive_ptr<CommGroup>;
using StorePtr = c10::intrusive_ptr<c10d::Store>;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

// The first line of an error from c10d or Gloo: c10::Error's what() carries a C++ stack below
// its message, and a refusal is one line.
inline std::string errorLine(const std::exception& e) {
    const auto* c10error = dynamic_cast<const c10::Error*>(&e);
    const std::string text = c10error != nullptr ? c10error->what_without_backtrace() : e.what();
    return text.substr(0, text.find('\n'));
}

}  // namespace mario::exec
