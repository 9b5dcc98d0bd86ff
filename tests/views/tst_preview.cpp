// A real schedule rendered end to end: the bundled GPT-3 13B Chimera example cut to 8 devices,
// Mario passes on, Gantt over memory charts. Checks that the picture has the kinds' colours
// and a legend; with MARIO_VIEWS_PREVIEW=out.png set it also saves the picture (and a zoomed,
// bubble-shaded one next to it) for a person to look at.
#include <QVBoxLayout>
#include <QtTest>
#include <qcustomplot.h>

#include "tests/views/ViewTestPlans.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"
#include "views/PlotStyle.h"

using namespace mario;
using namespace mario::views;

class PreviewTest : public QObject {
    Q_OBJECT
private slots:
    void rendersARealChimeraPlan();
};

namespace {

int pixelsOfColor(const QImage& image, const QColor& color) {
    int count = 0;
    const QRgb wanted = color.rgb();
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (image.pixel(x, y) == wanted) ++count;
    return count;
}

}  // namespace

void PreviewTest::rendersARealChimeraPlan() {
    const Plan plan = viewtest::chimeraExample(8, 16);
    const SimResult sim = viewtest::simulate(plan, true);
    QVERIFY(!sim.deadlocked);

    QWidget window;
    auto* layout = new QVBoxLayout(&window);
    auto* gantt = new GanttView;
    auto* memory = new MemoryChart;
    layout->addWidget(gantt, 3);
    layout->addWidget(memory, 2);
    QObject::connect(gantt, &GanttView::timeRangeChanged, memory, &MemoryChart::setTimeRange);
    window.resize(1400, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    gantt->setTimeline(buildTimeline(plan, sim));
    memory->setMemory(sim, plan.info.memory_limit_bytes);
    gantt->fitToView();
    QCoreApplication::processEvents();

    QCOMPARE(memory->curvePlot()->xAxis->range().lower, gantt->plot()->xAxis->range().lower);
    const QImage image = window.grab().toImage();
    QVERIFY(!image.isNull());
    QVERIFY(pixelsOfColor(image, colorOf(BoxKind::Backward)) > 1000);
    QVERIFY(views::legendItems(gantt->plot()->legend).size() >= 3);

    const QByteArray out = qgetenv("MARIO_VIEWS_PREVIEW");
    if (out.isEmpty()) return;
    QVERIFY(image.save(QString::fromLocal8Bit(out)));

    // Zoomed into the first fifth, bubbles shaded, the first device's recomputes highlighted.
    std::vector<BoxRef> highlights;
    for (const TimelineBox& box : gantt->timeline().lanes[1])
        if (box.kind == BoxKind::Recompute) highlights.push_back({box.lane, box.program_index});
    gantt->setHighlights(highlights);
    gantt->setShadeBubbles(true);
    gantt->setTimeRange(0, 0.2 * sim.makespan_ms);
    gantt->plot()->replot();
    QCoreApplication::processEvents();
    QString zoomed = QString::fromLocal8Bit(out);
    zoomed.replace(QStringLiteral(".png"), QStringLiteral("_zoom.png"));
    QVERIFY(window.grab().save(zoomed));
}

QTEST_MAIN(PreviewTest)
#include "tst_preview.moc"
