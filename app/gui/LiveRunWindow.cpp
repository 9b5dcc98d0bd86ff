#include "app/gui/LiveRunWindow.h"

#include <QCloseEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "app/gui/LiveRun.h"
#include "core/schedule/CheckpointedForwards.h"
#include "core/session/Fidelity.h"
#include "views/GanttView.h"

namespace mario::gui {

LiveRunWindow::LiveRunWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
    setWindowTitle(tr("Live run — Mario Workbench"));
    run_ = new LiveRun(this);
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    deviation_ = new QLabel(this);
    deviation_->setObjectName("liveDeviation");
    deviation_->setWordWrap(true);
    QFont bold = deviation_->font();
    bold.setBold(true);
    deviation_->setFont(bold);
    stopButton_ = new QPushButton(tr("Stop"), this);
    stopButton_->setEnabled(false);
    top->addWidget(deviation_, 1);
    top->addWidget(stopButton_);
    status_ = new QLabel(this);
    status_->setObjectName("liveStatus");
    status_->setWordWrap(true);
    simulated_ = new views::GanttView(this);
    measured_ = new views::GanttView(this);
    layout->addLayout(top);
    layout->addWidget(status_);
    layout->addWidget(new QLabel(tr("<b>Simulated</b>"), this));
    layout->addWidget(simulated_, 1);
    layout->addWidget(new QLabel(tr("<b>Measured</b> (mario-executor, iteration 0)"), this));
    layout->addWidget(measured_, 1);
    views::linkTimeAxes(simulated_, measured_);

    throttle_ = new QTimer(this);
    throttle_->setSingleShot(true);
    throttle_->setInterval(100);  // ~10 Hz
    connect(throttle_, &QTimer::timeout, this, &LiveRunWindow::refresh);
    connect(stopButton_, &QPushButton::clicked, this, &LiveRunWindow::stop);
    connect(run_, &LiveRun::started, this, [this] {
        running_ = true;
        stopButton_->setEnabled(true);
        scheduleRefresh();
    });
    connect(run_, &LiveRun::instructionFinished, this, &LiveRunWindow::onInstruction);
    connect(run_, &LiveRun::iterationFinished, this, [this](double stepMs, double loss) {
        if (iterations_ == 0) stepMs_ = stepMs;
        ++iterations_;
        lastStepMs_ = stepMs;
        lastLoss_ = loss;
        scheduleRefresh();
    });
    connect(run_, &LiveRun::failed, this, [this](const QString& message) {
        error_ = message;
        scheduleRefresh();
    });
    connect(run_, &LiveRun::finished, this, [this] {
        running_ = false;
        stopButton_->setEnabled(false);
        throttle_->stop();
        refresh();
    });
    resize(1400, 900);
}

void LiveRunWindow::setPlan(const Plan& plan, const SimResult& simulated) {
    plan_ = plan;
    sim_ = simulated;
    checkpointed_.clear();
    measuredTimes_.clear();
    for (const auto& device : plan_.devices) {
        checkpointed_.push_back(checkpointedForwards(device.program));
        measuredTimes_.emplace_back(device.program.size());
    }
    measuredCount_ = 0;
    iterations_ = 0;
    stepMs_ = lastStepMs_ = lastLoss_ = 0;
    error_.clear();
    simulated_->setTimeline(views::buildTimeline(plan_, sim_));
    refresh();
}

bool LiveRunWindow::start(const QString& planPath, const QString& executablePath, const QString& modelSpec,
                          const QStringList& extraArgs) {
    error_.clear();
    return run_->start(planPath, executablePath, modelSpec, extraArgs);
}

void LiveRunWindow::stop() { run_->stop(); }

void LiveRunWindow::closeEvent(QCloseEvent* event) {
    run_->stop();
    event->accept();
}

void LiveRunWindow::onInstruction(int device, int index, double startMs, double endMs, int iteration) {
    if (iteration != 0) return;
    if (device < 0 || device >= static_cast<int>(measuredTimes_.size())) return;
    auto& lane = measuredTimes_[static_cast<std::size_t>(device)];
    if (index < 0 || index >= static_cast<int>(lane.size())) return;
    auto& slot = lane[static_cast<std::size_t>(index)];
    const Op op = plan_.devices[static_cast<std::size_t>(device)].program[static_cast<std::size_t>(index)].op;
    if (!slot && isCompute(op)) ++measuredCount_;
    slot = std::make_pair(startMs, endMs);
    scheduleRefresh();
}

void LiveRunWindow::scheduleRefresh() {
    if (!throttle_->isActive()) throttle_->start();
}

views::Timeline LiveRunWindow::measuredTimeline() const {
    views::Timeline timeline;
    timeline.lanes.resize(plan_.devices.size());
    double t0 = std::numeric_limits<double>::infinity();
    for (const auto& lane : measuredTimes_)
        for (const auto& slot : lane)
            if (slot) t0 = std::min(t0, slot->first);
    if (!std::isfinite(t0)) return timeline;
    for (std::size_t d = 0; d < plan_.devices.size(); ++d) {
        const auto& program = plan_.devices[d].program;
        for (std::size_t i = 0; i < program.size(); ++i) {
            const auto& slot = measuredTimes_[d][i];
            if (!slot) continue;
            // Measured boxes are compute only: a RECV's wait is the gap between them.
            const auto kind =
                isCompute(program[i].op) ? views::boxKindOf(program[i].op, checkpointed_[d][i]) : std::nullopt;
            if (!kind) continue;
            views::TimelineBox box;
            box.start = slot->first - t0;
            box.end = std::max(slot->second - t0, box.start);
            box.lane = static_cast<int>(d);
            box.program_index = static_cast<int>(i);
            box.kind = *kind;
            box.stage = program[i].stage;
            box.microbatch = program[i].microbatch;
            box.op = program[i].op;
            timeline.lanes[d].push_back(box);
            timeline.makespan = std::max(timeline.makespan, box.end);
        }
        std::sort(timeline.lanes[d].begin(), timeline.lanes[d].end(),
                  [](const auto& a, const auto& b) { return a.start < b.start; });
    }
    return timeline;
}

void LiveRunWindow::refresh() {
    // Core's simulationError() (signed, relative to the measurement); per instruction its
    // magnitude, averaged over the compute instructions measured so far.
    double sum = 0;
    int n = 0;
    for (std::size_t d = 0; d < measuredTimes_.size() && d < sim_.devices.size(); ++d) {
        const auto& timings = sim_.devices[d].timings;
        for (std::size_t i = 0; i < measuredTimes_[d].size() && i < timings.size(); ++i) {
            const auto& slot = measuredTimes_[d][i];
            if (!slot || !isCompute(plan_.devices[d].program[i].op)) continue;
            const double simulated = timings[i].end - timings[i].start;
            const double measured = slot->second - slot->first;
            if (!(simulated > 0) || !(measured > 0)) continue;
            sum += std::abs(simulationError(simulated, measured));
            ++n;
        }
    }
    QStringList parts;
    const double makespan = sim_.makespan_ms;
    if (stepMs_ > 0 && makespan > 0)
        parts << tr("total deviation %1% (simulated %3 ms vs measured step %2 ms)")
                     .arg(QString::asprintf("%+.1f", 100 * simulationError(makespan, stepMs_)))
                     .arg(stepMs_, 0, 'g', 4)
                     .arg(makespan, 0, 'g', 4);
    if (n > 0)
        parts << tr("mean per-instruction deviation %1% over %2 instructions").arg(100 * sum / n, 0, 'f', 1).arg(n);
    deviation_->setText(parts.isEmpty() ? tr("waiting for measurements…") : parts.join(QStringLiteral("; ")));

    int planCompute = 0;
    for (const auto& device : plan_.devices)
        for (const auto& ins : device.program) planCompute += isCompute(ins.op) ? 1 : 0;
    QString status = running_ ? tr("running") : tr("not running");
    status += tr(" — %1 of %2 compute instructions measured, %3 iteration(s)")
                  .arg(measuredCount_)
                  .arg(planCompute)
                  .arg(iterations_);
    if (iterations_ > 0)
        status += tr(", last step %1 ms, loss %2").arg(lastStepMs_, 0, 'g', 4).arg(lastLoss_, 0, 'g', 5);
    if (!error_.isEmpty()) status += tr(" — error: %1").arg(error_);
    status_->setText(status);

    views::Timeline measured = measuredTimeline();
    const double span = std::max(makespan, measured.makespan);
    measured_->setTimeline(std::move(measured));
    // Both charts on the whole of both runs (the measured view follows the top one).
    if (span > 0) {
        simulated_->setTimeRange(-0.01 * span, 1.01 * span);
        measured_->setTimeRange(-0.01 * span, 1.01 * span);
    }
}

QString LiveRunWindow::deviationText() const { return deviation_->text(); }
QString LiveRunWindow::statusText() const { return status_->text(); }

}  // namespace mario::gui
