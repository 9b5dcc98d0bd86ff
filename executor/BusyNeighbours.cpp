#include "executor/BusyNeighbours.h"

#include <optional>
#include <stdexcept>
#include <system_error>

#include <c10/core/StreamGuard.h>
#include <torch/cuda.h>

#include "executor/DeviceStreams.h"
#include "executor/StageRuntime.h"

namespace mario::exec {

BusyNeighbours::BusyNeighbours(const GptModel& model, const LayerSlice& slice, const torch::Tensor& input,
                               const torch::Tensor& targets, const torch::Device& device, torch::ScalarType dtype,
                               int count, const std::vector<c10::Stream>& streams, const Optimizer* stepping)
    : device_(device) {
    // The weights are copied here, on the caller's thread, before any neighbour starts: the
    // model's master copy is not for concurrent use.
    std::vector<ParamMap> copies;
    for (int i = 0; i < count; ++i) copies.push_back(model.sliceOn(slice, device, dtype));
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
    const bool floating = input.is_floating_point();
    try {
        for (int i = 0; i < count; ++i) {
            std::optional<c10::Stream> stream;
            if (static_cast<std::size_t>(i) < streams.size()) stream = streams[i];
            threads_.emplace_back(
                [this, &model, slice, input, targets, floating, stream, stepping, params = std::move(copies[i])] {
                    bool first = true;
                    try {
                        at::set_num_threads(1);
                        enterDevice(device_);
                        std::optional<c10::StreamGuard> onStream;
                        if (stream) onStream.emplace(*stream);
                        auto forwardBackward = [&] {
                            torch::Tensor x = floating ? input.detach().clone().requires_grad_(true) : input;
                            torch::Tensor out = model.forward(slice, params, x, targets);
                            out.backward(out.dim() == 0 ? torch::ones_like(out) : torch::ones_like(out) * 1e-3);
                        };
                        StageRuntime stage;  // what a stepping neighbour steps
                        if (stepping) {
                            stage.params = params;
                            forwardBackward();  // gradients to step with; the step zeroes, never drops, them
                        }
                        while (!stop_.load()) {
                            if (stepping) {
                                stepping->step(stage);
                            } else {
                                forwardBackward();
                                for (const auto& [name, p] : params) p.mutable_grad() = torch::Tensor();
                            }
                            if (first) ++started_, first = false;
                        }
                    } catch (const std::exception& e) {
                        // Out of memory, most likely: the measurement would be of an idle neighbour.
                        std::lock_guard lock(mutex_);
                        if (failure_.empty()) failure_ = std::string("a busy neighbour partition failed: ") + e.what();
                    }
                    if (first) ++started_;
                });
        }
    } catch (const std::system_error& e) {
        // No thread left for a neighbour: the ones started are stopped and joined here (a
        // joinable std::thread destroyed with the vector would be std::terminate), and the
        // profile ends with one line.
        stop_ = true;
        for (auto& t : threads_) t.join();
        throw std::runtime_error("cannot start busy neighbour " + std::to_string(threads_.size() + 1) + " of " +
                                 std::to_string(count) + ": " + e.what());
    }
    while (started_.load() < static_cast<int>(threads_.size())) std::this_thread::yield();
}

std::optional<std::string> BusyNeighbours::failure() const {
    std::lock_guard lock(mutex_);
    if (failure_.empty()) return std::nullopt;
    return failure_;
}

BusyNeighbours::~BusyNeighbours() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
}

}  // namespace mario::exec
