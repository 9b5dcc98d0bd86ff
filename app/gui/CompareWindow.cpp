#include "app/gui/CompareWindow.h"

#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>

#include "core/sim/MemoryFit.h"
#include "core/util/HumanBytes.h"
#include "views/GanttView.h"

namespace mario::gui {
namespace {

double highestPeak(const SimResult& result) { return memoryFit(result, std::nullopt).highest_peak_bytes; }

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
    difference_ = new QLabel(this);
    difference_->setWordWrap(true);
    QFont bold = difference_->font();
    bold.setBold(true);
    difference_->setFont(bold);
    topName_ = new QLabel(this);
    bottomName_ = new QLabel(this);
    top_ = new views::GanttView(this);
    bottom_ = new views::GanttView(this);
    layout->addWidget(difference_);
    layout->addWidget(topName_);
    layout->addWidget(top_, 1);
    layout->addWidget(bottomName_);
    layout->addWidget(bottom_, 1);
    views::linkTimeAxes(top_, bottom_);
    resize(1400, 900);
}

void CompareWindow::setSchedules(const NamedSchedule& top, const NamedSchedule& bottom, views::TimeBase base) {
    top_->setTimeBase(base);
    bottom_->setTimeBase(base);
    topName_->setText(tr("<b>A</b> %1").arg(top.name.toHtmlEscaped()));
    bottomName_->setText(tr("<b>B</b> %1").arg(bottom.name.toHtmlEscaped()));
    difference_->setText(tr("A against B: %1").arg(describeDifference(top, bottom, base)));
    top_->setTimeline(views::buildTimeline(top.plan, top.result));
    bottom_->setTimeline(views::buildTimeline(bottom.plan, bottom.result));
    const double span = std::max(top.result.makespan_ms, bottom.result.makespan_ms);
    top_->setTimeRange(-0.01 * span, 1.01 * span);  // the bottom follows
}

QString CompareWindow::differenceText() const { return difference_->text(); }

}  // namespace mario::gui
