#include "ScheduleComputation.h"

#include <QElapsedTimer>
#include <algorithm>

#include "passes/PassManager.h"
#include "schedule/PlanEdit.h"
#include "sim/Simulator.h"

namespace mario::gui {

int indexOf(const std::vector<Instruction>& program, const Instruction& instruction) {
    const auto it = std::find(program.begin(), program.end(), instruction);
    return it == program.end() ? -1 : static_cast<int>(it - program.begin());
}

namespace {

// FNV-1a over the bytes that decide a computation.
class Fingerprint {
public:
    void add(const void* data, std::size_t size) {
        const auto* bytes = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < size; ++i) hash_ = (hash_ ^ bytes[i]) * 1099511628211ull;
    }
    template <class T>
    void add(const T& value) {
        add(&value, sizeof value);
    }
    void add(const Instruction& ins) {
        add(ins.op);
        add(ins.stage);
        add(ins.microbatch);
    }
    quint64 value() const { return hash_; }

private:
    quint64 hash_ = 1469598103934665603ull;
};

}  // namespace

quint64 stateKey(const DocumentState& state) {
    Fingerprint f;
    const Plan& p = state.source;
    f.add(p.link.latency_ms);
    f.add(p.link.bandwidth_gb_per_s);
    if (p.info.memory_limit_bytes) f.add(*p.info.memory_limit_bytes);
    for (const auto& chain : p.pipelines)
        for (int stage : chain) f.add(stage);
    for (const auto& stage : p.stages) {
        const StageCost& c = stage.cost;
        for (double v : {c.forward_ms, c.backward_ms, c.recompute_ms, c.activation_bytes, c.checkpoint_bytes,
                         c.static_bytes, c.send_bytes, c.reduce_grad_ms, c.optimizer_ms})
            f.add(v);
        f.add(stage.device);
    }
    for (const auto& device : p.devices) {
        f.add(device.program.size());
        for (const auto& ins : device.program) f.add(ins);
    }
    for (PassId pass : state.passes) f.add(pass);
    f.add(state.passes.size());
    for (const HandEdit& edit : state.edits) {
        f.add(edit.device);
        f.add(edit.moved);
        f.add(edit.before.has_value());
        if (edit.before) f.add(*edit.before);
    }
    return f.value();
}

namespace {

ComputedSchedule compute(const DocumentState& state, quint64 generation) {
    QElapsedTimer timer;
    timer.start();
    ComputedSchedule out;
    out.generation = generation;
    auto base = Simulator::run(state.source);
    if (!base) {
        out.error = QString::fromStdString(base.error().message);
        return out;
    }
    out.base = std::move(*base);

    Plan plan = state.source;
    auto run = runPasses(plan, state.passes, {.validate_each_pass = false});
    if (!run) {
        out.error = QString::fromStdString(run.error().message);
        return out;
    }
    out.steps = std::move(run->steps);

    for (const HandEdit& edit : state.edits) {
        if (edit.device < 0 || edit.device >= static_cast<int>(plan.devices.size())) {
            out.skippedEdits << QString::fromStdString(toActionString(edit.moved));
            continue;
        }
        const auto& program = plan.devices[edit.device].program;
        const int from = indexOf(program, edit.moved);
        const int before = edit.before ? indexOf(program, *edit.before) : static_cast<int>(program.size());
        auto edited = from >= 0 && before >= 0 ? moveInstruction(plan, {edit.device, from, before})
                                               : Result<EditedPlan>(makeError("its instructions are gone"));
        if (!edited) {
            out.skippedEdits << QString::fromStdString(toActionString(edit.moved));
            continue;
        }
        plan = std::move(edited->plan);
    }

    auto result = Simulator::run(plan, {.record_memory_curve = true});
    if (!result) {
        out.error = QString::fromStdString(result.error().message);
        return out;
    }
    out.result = std::move(*result);
    out.plan = std::move(plan);
    out.ok = true;
    out.compute_ms = timer.nsecsElapsed() / 1e6;
    return out;
}

}  // namespace

ComputedSchedule computeSchedule(const DocumentState& state, quint64 generation) {
    // Runs on a worker thread: whatever escapes below (memory on a huge schedule) becomes
    // this schedule's error line, never the end of the session.
    try {
        return compute(state, generation);
    } catch (const std::exception& e) {
        ComputedSchedule out;
        out.generation = generation;
        out.error = QStringLiteral("cannot compute this schedule (%1)").arg(QString::fromLocal8Bit(e.what()));
        return out;
    }
}

}  // namespace mario::gui
