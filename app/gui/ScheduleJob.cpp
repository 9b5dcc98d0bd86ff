#include "app/gui/ScheduleJob.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <exception>
#include <new>

#include "app/gui/DocumentLoader.h"
#include "core/session/PlanBuilder.h"
#include "core/session/ScheduleFingerprint.h"
#include "core/sim/RecomputeBound.h"

namespace mario::gui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("ScheduleJob", text); }

ScheduleJobResult stopped() {
    ScheduleJobResult out;
    out.cancelled = true;
    return out;
}

ScheduleJobResult failed(const QString& error) {
    ScheduleJobResult out;
    out.error = error;
    return out;
}

// The recompute bound's chain as boxes of the schedule (empty without hide).
std::vector<views::BoxRef> boundChainBoxes(const ComputedSchedule& s) {
    std::vector<views::BoxRef> boxes;
    if (s.hide_bound)
        for (const InstructionRef& at : chainInstructions(*s.hide_bound, s.plan))
            boxes.push_back({at.device, at.program_index});
    return boxes;
}

ScheduleJobResult run(const ScheduleJob& job, const JobProgress& progress) {
    ScheduleJobResult out;
    SharedInput input = job.input;
    if (job.kind == ScheduleJob::Kind::Open) {
        if (!progress(0, tr("reading %1").arg(QFileInfo(job.path).fileName()))) return stopped();
        LoadedDocument loaded = loadDocument(job.path, job.presets, job.stop.get());
        if (job.stop->load()) return stopped();  // a cancelled search's error or split is not the file's
        if (!loaded.ok) {
            out.error = loaded.error;
            out.deadlocked = loaded.deadlocked;
            return out;
        }
        out.documentPath = loaded.path;
        out.restored = loaded.restored;
        input = std::make_shared<const ScheduleInput>(std::move(loaded.state));
    } else if (job.kind == ScheduleJob::Kind::Generate) {
        if (!progress(0, tr("generating the plan"))) return stopped();
        auto plan = buildPlan(*input->config, job.stop.get());
        if (job.stop->load()) return stopped();
        if (!plan) return failed(QString::fromStdString(plan.error().message));
        auto generated = std::make_shared<ScheduleInput>(*input);  // its source is empty: cheap
        generated->source = std::move(*plan);
        input = std::move(generated);
    }
    if (!progress(1, tr("passes and simulation"))) return stopped();
    auto shown = std::make_shared<ShownSchedule>();
    shown->input = input;
    shown->schedule = computeSchedule(*input, 0, job.stop.get());
    if (job.stop->load()) return stopped();  // what came back was cut short: not an error
    if (!shown->schedule.ok)                 // a file's error names the file, as the reader's own do
        return failed(job.kind == ScheduleJob::Kind::Open ? job.path + QStringLiteral(": ") + shown->schedule.error
                                                          : shown->schedule.error);
    const ComputedSchedule& s = shown->schedule;
    if (!progress(2, tr("laying out %L1 instructions").arg(s.plan.instructionCount()))) return stopped();
    shown->timeline = std::make_shared<const views::Timeline>(views::buildTimeline(s.plan, s.result));
    if (!progress(3, tr("memory and idle time"))) return stopped();
    shown->fit = memoryFit(s.result, s.plan.info);
    shown->memory = std::make_shared<const views::MemoryChartData>(views::prepareMemoryChart(s.result, shown->fit));
    if (auto bubbles = bubbleBreakdown(s.plan, s.result)) shown->bubbles = std::move(*bubbles);
    shown->boundChain = boundChainBoxes(s);
    shown->fingerprint = scheduleFingerprint(*input);
    out.shown = std::move(shown);
    out.ok = true;
    return out;
}

}  // namespace

ScheduleJobResult runScheduleJob(const ScheduleJob& job, const JobProgress& progress) {
    // Core reports errors as values; this is the window's last line of defence on a worker
    // thread, so that no input, however large, ends the session.
    try {
        return run(job, progress);
    } catch (const std::bad_alloc&) {
        return failed(tr("the schedule is too large to compute (out of memory)"));
    } catch (const std::exception& e) {
        return failed(tr("cannot compute this schedule (%1)").arg(QString::fromLocal8Bit(e.what())));
    }
}

}  // namespace mario::gui
