#include "app/gui/LiveRunWindow.h"

#include <QCloseEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "app/gui/InstructionHeatMap.h"
#include "app/gui/LiveRun.h"
#include "app/gui/LiveRunTables.h"
#include "app/gui/TitledPane.h"
#include "core/schedule/CheckpointedForwards.h"
#include "core/session/Fidelity.h"
#include "views/GanttView.h"

namespace mario::gui {
namespace {

// "iterations 2–5", "iteration 2", or "the warm-up iteration", for the sentences.
QString countedIterations(const LiveMeasurements& m) {
    if (m.warmupOnly()) return QObject::tr("the warm-up iteration");
    const int last = static_cast<int>(m.iterations().size());
    const int first = LiveMeasurements::kWarmupIterations + 1;
    return last > first ? QObject::tr("median of iterations %1–%2").arg(first).arg(last)
                        : QObject::tr("iteration %1").arg(first);
}

}  // namespace

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
    iterationsBox_ = new QSpinBox(this);
    iterationsBox_->setObjectName("liveIterationsBox");
    // A warm-up and at least a few measured steps; 50 keeps a run of a real plan on CPU threads
    // within minutes.
    iterationsBox_->setRange(1, 50);
    iterationsBox_->setValue(kDefaultIterations);
    iterationsBox_->setToolTip(tr("Steps to run. The first is a warm-up: shown, but left out of the medians."));
    runAgain_ = new QPushButton(tr("Run again"), this);
    runAgain_->setObjectName("liveRunAgain");
    runAgain_->setEnabled(false);
    stopButton_ = new QPushButton(tr("Stop"), this);
    stopButton_->setObjectName("liveStop");
    stopButton_->setEnabled(false);
    top->addWidget(deviation_, 1);
    top->addWidget(new QLabel(tr("Iterations:"), this));
    top->addWidget(iterationsBox_);
    top->addWidget(runAgain_);
    top->addWidget(stopButton_);
    status_ = new QLabel(this);
    status_->setObjectName("liveStatus");
    status_->setWordWrap(true);
    simulated_ = new views::GanttView(this);
    measured_ = new views::GanttView(this);
    heatMap_ = new InstructionHeatMap(&measurements_, this);
    tables_ = new LiveRunTables(this);
    measuredTitle_ = new QLabel(this);

    auto* charts = new QSplitter(Qt::Vertical, this);
    charts->addWidget(titledPane(new QLabel(tr("<b>Simulated</b>"), this), simulated_, charts));
    charts->addWidget(titledPane(measuredTitle_, measured_, charts));
    charts->addWidget(titledPane(
        new QLabel(tr("<b>Measured ÷ simulated</b> per instruction, at the simulated times"), this), heatMap_, charts));
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(charts);
    split->addWidget(tables_);
    split->setStretchFactor(0, 1);
    split->setSizes({1050, 380});
    layout->addLayout(top);
    layout->addWidget(status_);
    layout->addWidget(split, 1);
    views::linkTimeAxes(simulated_, measured_);
    connect(simulated_, &views::GanttView::timeRangeChanged, heatMap_, &InstructionHeatMap::setTimeRange);

    throttle_ = new QTimer(this);
    throttle_->setSingleShot(true);
    throttle_->setInterval(100);  // ~10 Hz
    connect(throttle_, &QTimer::timeout, this, &LiveRunWindow::refresh);
    connect(stopButton_, &QPushButton::clicked, this, &LiveRunWindow::stop);
    connect(runAgain_, &QPushButton::clicked, this, &LiveRunWindow::runAgain);
    connect(run_, &LiveRun::started, this, [this] {
        setRunning(true);
        scheduleRefresh();
    });
    connect(run_, &LiveRun::instructionFinished, this,
            [this](int device, int index, double startMs, double endMs, int iteration) {
                measurements_.record(device, index, startMs, endMs, iteration);
                scheduleRefresh();
            });
    connect(run_, &LiveRun::iterationFinished, this, [this](double stepMs, double loss, int iteration) {
        measurements_.finishIteration(iteration, stepMs, loss);
        scheduleRefresh();
    });
    connect(run_, &LiveRun::failed, this, [this](const QString& message) {
        error_ = message;
        scheduleRefresh();
    });
    connect(run_, &LiveRun::finished, this, [this] {
        setRunning(false);
        throttle_->stop();
        refresh();
    });
    QSize size(1450, 950);
    if (const QScreen* s = screen()) size = size.boundedTo(s->availableGeometry().size() * 0.9);
    resize(size);
}

void LiveRunWindow::setPlan(const Plan& plan, const SimResult& simulated) {
    plan_ = plan;
    sim_ = simulated;
    checkpointed_.clear();
    for (const auto& device : plan_.devices) checkpointed_.push_back(checkpointedForwards(device.program));
    measurements_.reset(plan_, sim_);
    error_.clear();
    simulated_->setTimeline(views::buildTimeline(plan_, sim_));
    refresh();
}

bool LiveRunWindow::start(const QString& planPath, const QString& executablePath, const QString& modelSpec,
                          const QStringList& extraArgs) {
    if (run_->isRunning()) return false;
    lastPlanPath_ = planPath;
    lastExecutable_ = executablePath;
    lastModel_ = modelSpec;
    lastExtraArgs_ = extraArgs;
    QStringList args = extraArgs;
    if (!args.contains(QStringLiteral("--iterations")))
        args << QStringLiteral("--iterations") << QString::number(iterationsBox_->value());
    error_.clear();
    measurements_.reset(plan_, sim_);
    refresh();
    return run_->start(planPath, executablePath, modelSpec, args);
}

bool LiveRunWindow::runAgain() {
    if (lastExecutable_.isEmpty()) return false;
    return start(lastPlanPath_, lastExecutable_, lastModel_, lastExtraArgs_);
}

void LiveRunWindow::stop() { run_->stop(); }

void LiveRunWindow::closeEvent(QCloseEvent* event) {
    run_->stop();
    event->accept();
}

void LiveRunWindow::setRunning(bool running) {
    running_ = running;
    stopButton_->setEnabled(running);
    runAgain_->setEnabled(!running && !lastExecutable_.isEmpty());
    iterationsBox_->setEnabled(!running);
}

void LiveRunWindow::scheduleRefresh() {
    if (!throttle_->isActive()) throttle_->start();
}

views::Timeline LiveRunWindow::measuredTimeline() const {
    views::Timeline timeline;
    timeline.lanes.resize(plan_.devices.size());
    const int iteration = shownIteration();
    double t0 = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < plan_.devices.size(); ++d)
        for (std::size_t i = 0; i < plan_.devices[d].program.size(); ++i)
            if (auto m = measurements_.measured(iteration, static_cast<int>(d), static_cast<int>(i)))
                t0 = std::min(t0, m->first);
    if (!std::isfinite(t0)) return timeline;
    for (std::size_t d = 0; d < plan_.devices.size(); ++d) {
        const auto& program = plan_.devices[d].program;
        for (std::size_t i = 0; i < program.size(); ++i) {
            const auto slot = measurements_.measured(iteration, static_cast<int>(d), static_cast<int>(i));
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

QString LiveRunWindow::deviationSentence() const {
    // Core's simulationError() (signed, relative to the measurement) for the step and each
    // device; per instruction its magnitude, averaged over the compute instructions measured.
    QStringList parts;
    const double makespan = sim_.makespan_ms, step = stepMs();
    if (step > 0 && makespan > 0)
        parts << tr("total deviation %1% (simulated %2 ms vs measured step %3 ms, %4)")
                     .arg(QString::asprintf("%+.1f", 100 * simulationError(makespan, step)))
                     .arg(makespan, 0, 'g', 4)
                     .arg(step, 0, 'g', 4)
                     .arg(countedIterations(measurements_));
    double sum = 0;
    int n = 0;
    for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d)
        for (int i = 0; i < static_cast<int>(plan_.devices[static_cast<std::size_t>(d)].program.size()); ++i)
            if (auto median = measurements_.comparable(d, i) ? measurements_.medianDuration(d, i) : std::nullopt) {
                sum += std::abs(simulationError(measurements_.simulatedDuration(d, i), *median));
                ++n;
            }
    if (n > 0)
        parts << tr("mean per-instruction deviation %1% over %2 instructions").arg(100 * sum / n, 0, 'f', 1).arg(n);
    // The devices furthest apart, so an uneven pipeline (one slow stage) shows at a glance.
    const auto devices = measurements_.perDevice();
    int low = -1, high = -1;
    auto deviation = [&](int d) {
        const auto& x = devices[static_cast<std::size_t>(d)];
        return simulationError(x.simulated_ms, x.measured_ms);
    };
    for (int d = 0; d < static_cast<int>(devices.size()); ++d) {
        if (devices[static_cast<std::size_t>(d)].instructions == 0) continue;
        if (low < 0 || deviation(d) < deviation(low)) low = d;
        if (high < 0 || deviation(d) > deviation(high)) high = d;
    }
    if (low >= 0 && low != high)
        parts << tr("devices from %1% (device %2) to %3% (device %4)")
                     .arg(QString::asprintf("%+.1f", 100 * deviation(low)))
                     .arg(low)
                     .arg(QString::asprintf("%+.1f", 100 * deviation(high)))
                     .arg(high);
    return parts.join(QStringLiteral("; "));
}

void LiveRunWindow::refresh() {
    const QString sentence = deviationSentence();
    // A failure is said where the eye goes first, not under a "waiting" that never ends.
    if (!error_.isEmpty() && sentence.isEmpty()) deviation_->setText(tr("The run failed: %1").arg(error_));
    else deviation_->setText(sentence.isEmpty() ? tr("waiting for measurements…") : sentence);
    deviation_->setStyleSheet(!error_.isEmpty() && sentence.isEmpty() ? QStringLiteral("color: #B03020;") : QString());

    int planCompute = 0;
    for (const auto& device : plan_.devices)
        for (const auto& ins : device.program) planCompute += isCompute(ins.op) ? 1 : 0;
    const int shown = shownIteration();
    const auto& its = measurements_.iterations();
    const int finished =
        static_cast<int>(std::count_if(its.begin(), its.end(), [](const auto& i) { return i.finished; }));
    QString status = running_ ? tr("running") : tr("not running");
    status += tr(" — %1 of %2 iteration(s) finished").arg(finished).arg(iterationsBox_->value());
    if (shown >= 0)
        status += tr("; iteration %1: %2 of %3 compute instructions measured")
                      .arg(shown + 1)
                      .arg(measuredCount())
                      .arg(planCompute);
    if (finished > 0) {
        const auto& last = *std::find_if(its.rbegin(), its.rend(), [](const auto& i) { return i.finished; });
        status += tr(", last step %1 ms, loss %2").arg(last.step_ms, 0, 'g', 4).arg(last.loss, 0, 'g', 5);
    }
    if (!error_.isEmpty()) status += tr(" — error: %1").arg(error_);
    status_->setText(status);
    measuredTitle_->setText(shown < 0 ? tr("<b>Measured</b> (mario-executor)")
                            : shown < LiveMeasurements::kWarmupIterations
                                ? tr("<b>Measured</b> (mario-executor, iteration %1: the warm-up)").arg(shown + 1)
                                : tr("<b>Measured</b> (mario-executor, iteration %1)").arg(shown + 1));

    views::Timeline measured = measuredTimeline();
    const double span = std::max(sim_.makespan_ms, measured.makespan);
    measured_->setTimeline(std::move(measured));
    // Both charts on the whole of both runs (the measured view follows the top one).
    if (span > 0) {
        simulated_->setTimeRange(-0.01 * span, 1.01 * span);
        measured_->setTimeRange(-0.01 * span, 1.01 * span);
    }
    heatMap_->update();
    tables_->refresh(measurements_);
}

QString LiveRunWindow::deviationText() const { return deviation_->text(); }
QString LiveRunWindow::statusText() const { return status_->text(); }

}  // namespace mario::gui
