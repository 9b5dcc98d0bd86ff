#include "core/session/ScheduleFingerprint.h"

#include <string>
#include <type_traits>

#include "core/io/ConfigJson.h"

namespace mario {
namespace {

// FNV-1a. Every value goes in with its size or a presence byte ahead of it, so that moving a
// number from one field to the next, or an element from one list to the next, changes the hash.
class Hasher {
public:
    void bytes(const void* data, std::size_t size) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < size; ++i) hash_ = (hash_ ^ p[i]) * 1099511628211ull;
    }
    template <class T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
    void add(T value) { bytes(&value, sizeof value); }
    void add(const std::string& text) {
        add(text.size());
        bytes(text.data(), text.size());
    }
    template <class T>
    void add(const std::optional<T>& value) {
        add(value.has_value());
        if (value) add(*value);
    }
    template <class T>
    void add(const std::vector<T>& values) {
        add(values.size());
        for (const T& value : values) add(value);
    }
    template <class A, class B>
    void add(const std::pair<A, B>& pair) {
        add(pair.first);
        add(pair.second);
    }
    void add(const Instruction& ins) {
        add(ins.op);
        add(ins.stage);
        add(ins.microbatch);
        add(ins.overlapped);
    }
    void add(const StageCost& c) {
        for (double v :
             {c.forward_ms, c.backward_ms, c.recompute_ms, c.reduce_grad_ms, c.optimizer_ms, c.activation_bytes,
              c.checkpoint_bytes, c.static_bytes, c.send_bytes, c.working_bytes, c.contention})
            add(v);
        add(c.backward_input_ms);
        add(c.backward_weight_ms);
        add(c.weight_grad_bytes);
        add(c.optimizer_contention);
    }
    void add(const StageSpec& stage) {
        add(stage.index);
        add(stage.device);
        add(stage.cost);
        add(stage.layers);
    }
    void add(const DeviceProgram& device) {
        add(device.index);
        add(device.program);
    }
    void add(const PlanInfo& info) {
        add(info.name);
        add(info.scheme);
        add(info.micro_batch_size);
        add(info.sequence_length);
        add(info.data_parallel);
        add(info.memory_limit_bytes);
        add(info.device_memory_bytes);
        add(info.passes_applied);
        add(info.notes);
    }
    void add(const Plan& plan) {
        add(plan.info);
        add(plan.pipelines);
        add(plan.link.latency_ms);
        add(plan.link.bandwidth_gb_per_s);
        add(plan.overlap_factor);
        add(plan.stages);
        add(plan.devices);
    }
    void add(const HandEdit& edit) {
        add(edit.device);
        add(edit.moved);
        add(edit.before);
    }
    std::uint64_t value() const { return hash_; }

private:
    std::uint64_t hash_ = 1469598103934665603ull;
};

}  // namespace

std::uint64_t scheduleFingerprint(const ScheduleInput& input) {
    Hasher h;
    h.add(input.source);
    h.add(input.passes);
    h.add(input.edits);
    h.add(input.effort.prepose_simulations);
    h.add(input.effort.hide_simulations);
    h.add(input.effort.reorder_evaluations);
    // A config is small and its JSON names every field, including the ones that only shape
    // the generated plan (which the plan above already reflects).
    h.add(input.config.has_value());
    // The What-if settings describe a sweep to run, not this schedule: changing them must not
    // make the schedule look new (and be computed again).
    if (input.config) {
        Config shaping = *input.config;
        shaping.what_if.reset();
        h.add(writeConfig(shaping).dump());
    }
    return h.value();
}

}  // namespace mario
