#include "app/gui/CompareWindow.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScreen>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

#include "app/gui/DeviceComparisonTable.h"
#include "app/gui/TitledPane.h"
#include "core/sim/MemoryFit.h"
#include "core/sim/Simulator.h"
#include "core/util/HumanBytes.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"

namespace mario::gui {
namespace {

double highestPeak(const SimResult& result) { return memoryFit(result, std::nullopt).highest_peak_bytes; }

// The window's base schedule is simulated without memory curves (the main window shows only
// its Gantt); simulating it again with them costs one simulation (25 ms for GPT-3 13B Chimera
// 32×64), paid only when the compare window opens.
SimResult withMemoryCurves(const NamedSchedule& schedule) {
    const auto& devices = schedule.result.devices;
    const bool hasCurves = std::any_of(devices.begin(), devices.end(), [](const auto& d) { return !d.memory.empty(); });
    if (hasCurves || devices.empty()) return schedule.result;
    auto again = Simulator::run(schedule.plan, SimOptions{.record_memory_curve = true});
    return again && !again->deadlocked ? *again : schedule.result;
}

}  // namespace

QString describeDifference(const NamedSchedule& a, const NamedSchedule& b, views::TimeBase base) {
    const double ta = a.result.makespan_ms, tb = b.result.makespan_ms;
    const double change = tb > 0 ? ta / tb - 1 : 0;
    return QObject::tr("step %1 vs %2 (%3%4%), bubbles %5% vs %6%, highest peak memory %7 vs %8")
        .arg(views::formatDuration(ta, base, 6), views::formatDuration(tb, base, 6))
        .arg(change >= 0 ? "+" : "")
        .arg(100 * change, 0, 'f', 1)
        .arg(100 * a.result.bubble_ratio, 0, 'f', 1)
        .arg(100 * b.result.bubble_ratio, 0, 'f', 1)
        .arg(QString::fromStdString(humanBytes(highestPeak(a.result))),
             QString::fromStdString(humanBytes(highestPeak(b.result))));
}

CompareWindow::CompareWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
    setWindowTitle(tr("Compare schedules — Mario Workbench"));
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel(this);
    summary_->setObjectName("compareSummary");
    summary_->setWordWrap(true);
    QFont bold = summary_->font();
    bold.setBold(true);
    summary_->setFont(bold);
    perDevice_ = new QLabel(this);
    perDevice_->setObjectName("compareDifferences");
    perDevice_->setWordWrap(true);
    topName_ = new QLabel(this);
    bottomName_ = new QLabel(this);
    top_ = new views::GanttView(this);
    bottom_ = new views::GanttView(this);
    topMemory_ = new views::MemoryChart(this);
    bottomMemory_ = new views::MemoryChart(this);
    table_ = new DeviceComparisonTable(this);

    // Gantt, its memory, Gantt, its memory: every chart on one time axis, so a peak lines up
    // with the instructions that made it. The table beside them reads across both schedules.
    auto* charts = new QSplitter(Qt::Vertical, this);
    charts->addWidget(titledPane(topName_, top_, charts));
    charts->addWidget(topMemory_);
    charts->addWidget(titledPane(bottomName_, bottom_, charts));
    charts->addWidget(bottomMemory_);
    charts->setStretchFactor(0, 3);
    charts->setStretchFactor(1, 2);
    charts->setStretchFactor(2, 3);
    charts->setStretchFactor(3, 2);
    charts->setSizes({3000, 2000, 3000, 2000});  // from the start, not from the charts' minimums
    charts->setChildrenCollapsible(false);
    // Each chart keeps a readable plot area (views/MemoryChart.h, GanttView.h): the Gantts and
    // memory curves here a little shorter than in the main window, so that the four fit the
    // default size (about 900 px). The peak bars keep the main window's height: at 40 px their
    // axis had room for "0" and one more label. On a shorter screen the charts scroll rather
    // than the window outgrowing it.
    for (views::GanttView* gantt : {top_, bottom_}) gantt->setMinimumPlotHeight(60);
    for (views::MemoryChart* memory : {topMemory_, bottomMemory_})
        memory->setMinimumPlotHeights(50, views::MemoryChart::kMinPeaksHeight);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName("compareCharts");
    scroll->setWidget(charts);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFrameShape(QFrame::NoFrame);
    split_ = new QSplitter(Qt::Horizontal, this);
    split_->addWidget(scroll);
    split_->addWidget(table_);
    split_->setStretchFactor(0, 1);
    split_->setStretchFactor(1, 0);
    split_->setSizes({1100, 400});
    outline_ = new QCheckBox(tr("Outline them"), this);
    outline_->setObjectName("compareOutline");
    outline_->setToolTip(
        tr("Outline every differing instruction in both charts (zoom in to read them when many differ)"));
    connect(outline_, &QCheckBox::toggled, this, &CompareWindow::applyOutlines);
    auto* differences = new QHBoxLayout;
    differences->addWidget(perDevice_, 1);
    differences->addWidget(outline_, 0, Qt::AlignTop);
    layout->addWidget(summary_);
    layout->addLayout(differences);
    layout->addWidget(split_, 1);

    views::linkTimeAxes(top_, bottom_);
    connect(top_, &views::GanttView::timeRangeChanged, topMemory_, &views::MemoryChart::setTimeRange);
    connect(bottom_, &views::GanttView::timeRangeChanged, bottomMemory_, &views::MemoryChart::setTimeRange);
    // Large enough for four charts, never larger than the screen (issue 14, item 7).
    QSize size(1500, 1000);
    if (const QScreen* s = screen()) size = size.boundedTo(s->availableGeometry().size() * 0.9);
    resize(size);
}

void CompareWindow::setSchedules(const NamedSchedule& top, const NamedSchedule& bottom, views::TimeBase base) {
    const SimResult topResult = withMemoryCurves(top), bottomResult = withMemoryCurves(bottom);
    top_->setTimeBase(base);
    bottom_->setTimeBase(base);
    topMemory_->setTimeBase(base);
    bottomMemory_->setTimeBase(base);
    topName_->setText(tr("<b>A</b> %1").arg(top.name.toHtmlEscaped()));
    bottomName_->setText(tr("<b>B</b> %1").arg(bottom.name.toHtmlEscaped()));
    summary_->setText(tr("A against B: %1").arg(describeDifference(top, bottom, base)));
    difference_ = compareSchedules(top.plan, topResult, bottom.plan, bottomResult);
    perDevice_->setText(describeDifferences(difference_));
    top_->setTimeline(views::buildTimeline(top.plan, topResult));
    bottom_->setTimeline(views::buildTimeline(bottom.plan, bottomResult));
    const QSignalBlocker quiet(outline_);
    outline_->setChecked(
        std::all_of(difference_.devices.begin(), difference_.devices.end(),
                    [](const DeviceDifference& d) { return d.total() <= kOutlinedPerDeviceByDefault; }));
    applyOutlines();
    // One memory scale for both: equal heights are equal bytes, in one unit, so the taller
    // schedule's memory looks taller (each scaled to its own peak, both would fill the chart).
    const MemoryFit topFit = memoryFit(topResult, top.plan.info);
    const MemoryFit bottomFit = memoryFit(bottomResult, bottom.plan.info);
    const double tallest = std::max(views::MemoryChart::tallestBytes(topResult, topFit.budget_bytes),
                                    views::MemoryChart::tallestBytes(bottomResult, bottomFit.budget_bytes));
    topMemory_->setScaleFloorBytes(tallest);
    bottomMemory_->setScaleFloorBytes(tallest);
    topMemory_->setMemory(topResult, topFit);
    bottomMemory_->setMemory(bottomResult, bottomFit);
    table_->setComparison(top.plan, topResult, bottom.plan, bottomResult, difference_, base);
    // The table as wide as its columns, the charts the rest.
    const int total = std::max(split_->width(), width() - 24);  // before the first show, the window's
    const int tableWidth = std::min(table_->naturalWidth(), total / 3);
    split_->setSizes({std::max(total - tableWidth, 1), tableWidth});
    const double span = std::max(topResult.makespan_ms, bottomResult.makespan_ms);
    top_->setTimeRange(-0.01 * span, 1.01 * span);  // the bottom and both memory charts follow
    topMemory_->setTimeRange(-0.01 * span, 1.01 * span);
    bottomMemory_->setTimeRange(-0.01 * span, 1.01 * span);
}

void CompareWindow::applyOutlines() {
    top_->setHighlights(outline_->isChecked() ? difference_.inA : std::vector<views::BoxRef>{});
    bottom_->setHighlights(outline_->isChecked() ? difference_.inB : std::vector<views::BoxRef>{});
}

QString CompareWindow::differenceText() const { return summary_->text(); }
QString CompareWindow::differencesPerDeviceText() const { return perDevice_->text(); }

}  // namespace mario::gui
