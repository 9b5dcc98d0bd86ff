// MemoryChart and curve thinning: over-limit count, the limit line, maxima kept by thinning.
// 1F1B's closed form gives the peaks: device d of p holds p − d micro-batches of activations.
#include <QRandomGenerator>
#include <QtTest>
#include <qcustomplot.h>

#include "tests/views/ViewTestPlans.h"
#include "views/DeviceGradientLegendItem.h"
#include "views/MemoryChart.h"
#include "views/MemoryChartData.h"
#include "views/MemoryEnvelope.h"
#include "views/MemoryThinning.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"

using namespace mario;
using namespace mario::views;

namespace {

// The legend entry that names the limit (a line sample and its words), or nullptr.
SwatchLegendItem* limitEntry(const QCustomPlot* plot) {
    for (QCPAbstractLegendItem* item : legendItems(plot->legend))
        if (auto* entry = qobject_cast<SwatchLegendItem*>(item); entry && entry->isLine()) return entry;
    return nullptr;
}

// Text drawn inside the plot: none, since a label on the limit line covered bars and curves.
bool hasTextItem(const QCustomPlot* plot) {
    for (int i = 0; i < plot->itemCount(); ++i)
        if (qobject_cast<QCPItemText*>(plot->item(i))) return true;
    return false;
}

}  // namespace

class MemoryChartTest : public QObject {
    Q_OBJECT
private slots:
    void countsDevicesOverLimit();
    void drawsTheLimitLine();
    void curvesKeepEveryDevicePeak();
    void thinningKeepsTheMaximum();
    void smallCurvesAreNotThinned();
    void followsTheGanttTimeRange();
    void picksAReadableUnit();
    void aFarLimitIsNamedAboveTheScaleNotDrawn();
    void manyDevicesDrawTheFullestAndTheEnvelope();
    void theEnvelopeIsTheHighestDeviceAtEveryInstant();
    void legendAtAnyDeviceCount();
    void statesTheDevicesOverTheLimit();
    void overLimitSentenceSitsAboveTheCharts();
    void judgesAgainstOneCardWithoutALimit();
    void thousandsOfDevicesShareBarsAtTheirHighestPeak();

private:
    static SimResult oneGigabytePerMicrobatch(int microbatches = 8, int devices = 4);
};

SimResult MemoryChartTest::oneGigabytePerMicrobatch(int microbatches, int devices) {
    viewtest::UnitStage unit;
    unit.activation = 1e9;
    unit.staticBytes = 0.5e9;
    return viewtest::simulate(viewtest::unitPlan(Scheme::OneFOneB, devices, microbatches, unit), true);
}

void MemoryChartTest::countsDevicesOverLimit() {
    const SimResult sim = oneGigabytePerMicrobatch();
    // Peaks by hand: 0.5 GB static + (4 − d) GB → 4.5, 3.5, 2.5, 1.5 GB.
    MemoryChart chart;
    chart.resize(800, 500);
    chart.setMemory(sim, 3.0e9);
    QCOMPARE(chart.devicesOverLimit(), 2);
    chart.setMemory(sim, 1.0e9);
    QCOMPARE(chart.devicesOverLimit(), 4);
    chart.setMemory(sim, std::nullopt);
    QCOMPARE(chart.devicesOverLimit(), 0);

    chart.setMemory(sim, 3.0e9);
    QCustomPlot* peaks = chart.peakPlot();
    QCOMPARE(peaks->plottableCount(), 2);  // within and over, not one series per device
    auto* within = qobject_cast<QCPBars*>(peaks->plottable(0));
    auto* over = qobject_cast<QCPBars*>(peaks->plottable(1));
    QVERIFY(within && over);
    QCOMPARE(over->data()->size(), 2);
    QCOMPARE(within->data()->size(), 2);
    QCOMPARE(over->data()->at(0)->key, 0.0);
    QCOMPARE(over->data()->at(0)->value, 4.5);
    QCOMPARE(over->data()->at(1)->value, 3.5);
    QCOMPARE(within->data()->at(0)->value, 2.5);
    QVERIFY(over->brush().color() != within->brush().color());
}

void MemoryChartTest::drawsTheLimitLine() {
    MemoryChart chart;
    chart.setMemory(oneGigabytePerMicrobatch(), 3.0e9);
    QCustomPlot* peaks = chart.peakPlot();
    QCPItemStraightLine* line = nullptr;
    for (int i = 0; i < peaks->itemCount(); ++i)
        if (auto* l = qobject_cast<QCPItemStraightLine*>(peaks->item(i))) line = l;
    QVERIFY(line);
    QCOMPARE(line->point1->coords().y(), 3.0);
    QCOMPARE(line->point2->coords().y(), 3.0);
    QVERIFY(peaks->yAxis->range().upper > 4.5);  // the tallest bar and the line both fit
    // Named in each plot's legend in the line's own dashes, never by text over the bars.
    for (const QCustomPlot* plot : {chart.curvePlot(), peaks}) {
        const SwatchLegendItem* entry = limitEntry(plot);
        QVERIFY(entry);
        QCOMPARE(entry->text(), QStringLiteral("limit 3 GB"));
        QCOMPARE(entry->stroke().style(), line->pen().style());
        QVERIFY(!hasTextItem(plot));
    }
    chart.setMemory(oneGigabytePerMicrobatch(), std::nullopt);
    for (int i = 0; i < peaks->itemCount(); ++i) QVERIFY(!qobject_cast<QCPItemStraightLine*>(peaks->item(i)));
    QVERIFY(!limitEntry(peaks) && !limitEntry(chart.curvePlot()));
}

void MemoryChartTest::curvesKeepEveryDevicePeak() {
    // 400 micro-batches: ~800 memory changes per device, thinned for a 300 px wide plot.
    const SimResult sim = oneGigabytePerMicrobatch(400);
    MemoryChart chart;
    chart.resize(300, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setMemory(sim, std::nullopt);
    QCustomPlot* curves = chart.curvePlot();
    QCOMPARE(curves->graphCount(), 4);
    for (int d = 0; d < 4; ++d) {
        double maximum = 0;
        for (auto it = curves->graph(d)->data()->constBegin(); it != curves->graph(d)->data()->constEnd(); ++it)
            maximum = std::max(maximum, it->value);
        QCOMPARE(maximum, sim.devices[d].peak_bytes / 1e9);
        QCOMPARE(maximum, 0.5 + (4 - d));
        QVERIFY(curves->graph(d)->data()->size() < static_cast<int>(chart.curves()[d].size()));
    }
}

void MemoryChartTest::thinningKeepsTheMaximum() {
    // A random walk of 100k steps with one narrow spike.
    std::vector<MemoryPoint> curve;
    QRandomGenerator random(7);
    double value = 50;
    for (int i = 0; i < 100000; ++i) {
        value = std::max(0.0, value + random.bounded(2.0) - 1.0);
        curve.push_back({i * 0.01, value});
    }
    curve[61234].bytes = 1e6;  // 1 point wide in 100k: far below a pixel
    const int buckets = 300;
    const auto thinned = thinKeepingMax(curve, 0, 1000, buckets);
    QVERIFY(thinned.size() <= 2 * buckets + 2);
    for (std::size_t i = 1; i < thinned.size(); ++i) QVERIFY(thinned[i - 1].time_ms <= thinned[i].time_ms);
    double thinnedMax = 0;
    for (const auto& p : thinned) thinnedMax = std::max(thinnedMax, p.bytes);
    QCOMPARE(thinnedMax, 1e6);
    // Each bucket's own maximum survives, within that bucket's time span.
    const double width = 1000.0 / buckets;
    for (int b = 0; b < buckets; b += 37) {
        double original = 0, kept = 0;
        for (const auto& p : curve)
            if (p.time_ms >= b * width && p.time_ms < (b + 1) * width) original = std::max(original, p.bytes);
        for (const auto& p : thinned)
            if (p.time_ms >= b * width && p.time_ms < (b + 1) * width) kept = std::max(kept, p.bytes);
        QCOMPARE(kept, original);
    }
    // Zoomed in: points outside the range are dropped except one on each side.
    const auto zoomed = thinKeepingMax(curve, 400, 410, 100);
    QVERIFY(zoomed.size() <= 2 * 100 + 2);
    QVERIFY(zoomed.front().time_ms < 400 && zoomed.back().time_ms > 410);
}

void MemoryChartTest::smallCurvesAreNotThinned() {
    const std::vector<MemoryPoint> curve{{0, 1}, {1, 5}, {2, 3}, {3, 0}};
    const auto thinned = thinKeepingMax(curve, 0, 3, 100);
    QCOMPARE(thinned.size(), curve.size());
    for (std::size_t i = 0; i < curve.size(); ++i) QCOMPARE(thinned[i].bytes, curve[i].bytes);
}

void MemoryChartTest::followsTheGanttTimeRange() {
    MemoryChart chart;
    chart.setMemory(oneGigabytePerMicrobatch(), 3.0e9);
    chart.setTimeRange(3, 7);
    QCOMPARE(chart.curvePlot()->xAxis->range().lower, 3.0);
    QCOMPARE(chart.curvePlot()->xAxis->range().upper, 7.0);
    chart.setMemory(oneGigabytePerMicrobatch(), 3.0e9);  // a re-simulation keeps the followed range
    QCOMPARE(chart.curvePlot()->xAxis->range().lower, 3.0);
}

void MemoryChartTest::picksAReadableUnit() {
    // Teaching costs: 1000-byte activations, 4 devices, no static memory → peaks 4, 3, 2, 1 KB.
    const SimResult sim = viewtest::simulate(viewtest::unitPlan(Scheme::OneFOneB, 4, 8), true);
    MemoryChart chart;
    chart.setMemory(sim, std::nullopt);
    QCOMPARE(chart.unitName(), QStringLiteral("KB"));
    QVERIFY(chart.curvePlot()->yAxis->label().contains(QStringLiteral("KB")));
    auto* bars = qobject_cast<QCPBars*>(chart.peakPlot()->plottable(0));
    QVERIFY(bars);
    QCOMPARE(bars->data()->at(0)->value, 4.0);
    QCOMPARE(bars->data()->at(3)->value, 1.0);
    chart.setMemory(oneGigabytePerMicrobatch(), std::nullopt);
    QCOMPARE(chart.unitName(), QStringLiteral("GB"));
}

void MemoryChartTest::aFarLimitIsNamedAboveTheScaleNotDrawn() {
    // Teaching costs peak at 4 KB; against a 40 GB card the curves would be flat at zero.
    const SimResult sim = viewtest::simulate(viewtest::unitPlan(Scheme::OneFOneB, 4, 8), true);
    MemoryChart chart;
    chart.setMemory(sim, 40e9);
    QCOMPARE(chart.unitName(), QStringLiteral("KB"));
    for (QCustomPlot* plot : {chart.curvePlot(), chart.peakPlot()}) {
        QVERIFY(plot->yAxis->range().upper < 5);  // KB: the data's scale, not the card's
        for (int i = 0; i < plot->itemCount(); ++i) QVERIFY(!qobject_cast<QCPItemStraightLine*>(plot->item(i)));
        QVERIFY(!hasTextItem(plot));
        const SwatchLegendItem* above = limitEntry(plot);
        QVERIFY(above);
        QCOMPARE(above->objectName(), QStringLiteral("limitAboveScale"));
        QVERIFY2(above->text().contains("limit 40 GB, above the scale"), qPrintable(above->text()));
    }
    // A limit within three times the data stays on the axis as a line.
    chart.setMemory(sim, 10e3);
    QVERIFY(chart.peakPlot()->yAxis->range().upper >= 10);
}

void MemoryChartTest::manyDevicesDrawTheFullestAndTheEnvelope() {
    // 1F1B on 300 devices: device d holds (300 − d) activations at its peak. 300 curves would be
    // unreadable (and 65 536 took minutes to add): the 8 fullest are drawn and the envelope.
    const SimResult sim = oneGigabytePerMicrobatch(300, 300);
    MemoryChart chart;
    chart.resize(900, 500);
    chart.setMemory(sim, std::nullopt);
    QCustomPlot* curves = chart.curvePlot();
    QCOMPARE(curves->graphCount(), MemoryChart::kFullestDrawn + 1);
    for (int g = 0; g < MemoryChart::kFullestDrawn; ++g)  // devices 0-7 rise highest
        QCOMPARE(curves->graph(g)->name(), QStringLiteral("device %1").arg(g));
    QCPGraph* envelope = curves->graph(MemoryChart::kFullestDrawn);
    QVERIFY(envelope->name().startsWith(QStringLiteral("highest of all 300 devices")));
    double highest = 0, tallestPeak = 0;
    curves->replot();
    for (auto it = envelope->data()->constBegin(); it != envelope->data()->constEnd(); ++it)
        highest = std::max(highest, it->value);
    for (const auto& device : sim.devices) tallestPeak = std::max(tallestPeak, device.peak_bytes);
    QCOMPARE(highest, tallestPeak / 1e9);
    const auto items = legendItems(curves->legend);
    QCOMPARE(items.size(), 2);  // the gradient strip and the envelope
    QVERIFY(qobject_cast<DeviceGradientLegendItem*>(items.first()));
    // Every device still has its bar.
    auto* bars = qobject_cast<QCPBars*>(chart.peakPlot()->plottable(0));
    QCOMPARE(bars->data()->size(), 300);
}

void MemoryChartTest::theEnvelopeIsTheHighestDeviceAtEveryInstant() {
    // Against a brute force: at every time any curve changes, the maximum of every device's
    // level then (each point holds until the next).
    const SimResult sim = oneGigabytePerMicrobatch(6, 5);
    std::vector<std::vector<MemoryPoint>> curves;
    for (const auto& device : sim.devices) curves.push_back(device.memory);
    const std::vector<MemoryPoint> envelope = upperEnvelope(curves);
    auto levelAt = [](const std::vector<MemoryPoint>& curve, double t) {
        double level = 0;
        for (const MemoryPoint& p : curve)
            if (p.time_ms <= t) level = p.bytes;
        return level;
    };
    for (const auto& curve : curves)
        for (const MemoryPoint& p : curve) {
            double expected = 0;
            for (const auto& other : curves) expected = std::max(expected, levelAt(other, p.time_ms));
            QCOMPARE(levelAt(envelope, p.time_ms), expected);
        }
    QCOMPARE(fullestDevices(curves, 2), (std::vector<int>{0, 1}));
}

void MemoryChartTest::legendAtAnyDeviceCount() {
    MemoryChart chart;
    chart.resize(900, 500);
    // Four devices: one entry each, named.
    chart.setMemory(oneGigabytePerMicrobatch(), std::nullopt);
    chart.curvePlot()->replot();
    QStringList names;
    for (QCPAbstractLegendItem* item : legendItems(chart.curvePlot()->legend))
        if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(item)) names << entry->plottable()->name();
    QCOMPARE(names, (QStringList{"device 0", "device 1", "device 2", "device 3"}));
    QVERIFY(chart.curvePlot()->legend->visible());
    // Thirty-two: one gradient strip from device 0 to device 31, not 32 entries.
    chart.setMemory(oneGigabytePerMicrobatch(32, 32), std::nullopt);
    chart.curvePlot()->replot();
    const auto items = legendItems(chart.curvePlot()->legend);
    QCOMPARE(items.size(), 1);
    auto* strip = qobject_cast<DeviceGradientLegendItem*>(items.first());
    QVERIFY(strip);
    QCOMPARE(strip->firstLabel(), QStringLiteral("device 0"));
    QCOMPARE(strip->lastLabel(), QStringLiteral("device 31"));
    QVERIFY(chart.curvePlot()->legend->visible());
    // The strip fits the plot: its row is no taller than two lines of text.
    QVERIFY(chart.curvePlot()->legend->outerRect().height() < 2 * QFontMetrics(chart.font()).height() + 12);
    // The lines and the strip share one scale: the ends are device 0's and device 31's colours.
    QCOMPARE(chart.curvePlot()->graph(0)->pen().color(), deviceColor(0, 32));
    QCOMPARE(chart.curvePlot()->graph(31)->pen().color(), deviceColor(31, 32));
    QVERIFY(deviceColor(0, 32) != deviceColor(31, 32));
    // Back to few devices: entries again.
    chart.setMemory(oneGigabytePerMicrobatch(), std::nullopt);
    QCOMPARE(legendItems(chart.curvePlot()->legend).size(), 4);
}

void MemoryChartTest::statesTheDevicesOverTheLimit() {
    MemoryChart chart;
    // Peaks by hand (device d of p holds p − d micro-batches of 1 GB, plus 0.5 GB static):
    // 4.5, 3.5, 2.5, 1.5 GB on four devices.
    chart.setMemory(oneGigabytePerMicrobatch(), 3.0e9);
    QCOMPARE(chart.overLimitText(), QStringLiteral("2 devices over the 3 GB limit: 0, 1 (highest 4.5 GB on device 0)"));
    chart.setMemory(oneGigabytePerMicrobatch(), 4.0e9);
    QCOMPARE(chart.overLimitText(), QStringLiteral("1 device over the 4 GB limit: 0 (highest 4.5 GB on device 0)"));
    chart.setMemory(oneGigabytePerMicrobatch(), 10.0e9);
    QCOMPARE(chart.overLimitText(),
             QStringLiteral("All 4 devices are within the 10 GB limit (highest 4.5 GB on device 0)"));
    chart.setMemory(oneGigabytePerMicrobatch(), std::nullopt);
    QCOMPARE(chart.overLimitText(), QString());
    // 32 devices: 32.5 − d GB, over a 10 GB limit for d ≤ 22: 23 devices, the first dozen named.
    chart.setMemory(oneGigabytePerMicrobatch(32, 32), 10.0e9);
    QCOMPARE(chart.devicesOverLimit(), 23);
    QCOMPARE(chart.overLimitText(),
             QString::fromUtf8("23 devices over the 10 GB limit: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, \u2026 "
                               "(highest 32.5 GB on device 0)"));
}

void MemoryChartTest::overLimitSentenceSitsAboveTheCharts() {
    MemoryChart chart;
    chart.resize(900, 500);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setMemory(oneGigabytePerMicrobatch(), 3.0e9);
    QTRY_VERIFY(chart.overLimitLabel()->isVisible());
    // Inside the widget, above the curves: never below the fold of a short panel.
    QVERIFY(chart.overLimitLabel()->geometry().bottom() <= chart.curvePlot()->geometry().top());
    QVERIFY(chart.overLimitLabel()->geometry().top() >= 0);
    chart.setMemory(oneGigabytePerMicrobatch(), std::nullopt);
    QVERIFY(!chart.overLimitLabel()->isVisible());
}

void MemoryChartTest::judgesAgainstOneCardWithoutALimit() {
    // Peaks 4.5, 3.5, 2.5, 1.5 GB (above). No limit, a 3 GB card: memoryFit judges by the card,
    // and the chart says so rather than calling the card a limit the passes kept to.
    const SimResult sim = oneGigabytePerMicrobatch();
    PlanInfo info;
    info.device_memory_bytes = 3.0e9;
    MemoryChart chart;
    chart.setMemory(sim, memoryFit(sim, info));
    QCOMPARE(chart.devicesOverLimit(), 2);
    QCOMPARE(chart.overLimitText(),
             QStringLiteral("No limit set, and 2 devices over one card's 3 GB: 0, 1 (highest 4.5 GB on device 0)"));
    QCustomPlot* peaks = chart.peakPlot();
    const SwatchLegendItem* label = limitEntry(peaks);
    QVERIFY(label);
    QCOMPARE(label->text(), QStringLiteral("one card 3 GB"));
    QCOMPARE(qobject_cast<QCPBars*>(peaks->plottable(1))->name(), QStringLiteral("over one card"));
    info.device_memory_bytes = 8.0e9;
    chart.setMemory(sim, memoryFit(sim, info));
    QCOMPARE(chart.overLimitText(),
             QStringLiteral("No limit set; all 4 devices fit one card's 8 GB (highest 4.5 GB on device 0)"));
    // A limit outranks the card, and is named a limit.
    info.memory_limit_bytes = 4.0e9;
    chart.setMemory(sim, memoryFit(sim, info));
    QCOMPARE(chart.overLimitText(), QStringLiteral("1 device over the 4 GB limit: 0 (highest 4.5 GB on device 0)"));
    label = limitEntry(peaks);
    QVERIFY(label);
    QCOMPARE(label->text(), QStringLiteral("limit 4 GB"));
}

void MemoryChartTest::thousandsOfDevicesShareBarsAtTheirHighestPeak() {
    // 5000 devices: one bar per device drew 5000 rectangles a replot (100 ms at 65 536), most
    // narrower than a pixel. A bar stands for 3 neighbours at their highest peak, and one
    // device over the limit still turns its bar.
    SimResult sim;
    sim.makespan_ms = 10;
    for (int d = 0; d < 5000; ++d) {
        DeviceStats device;
        device.index = d;
        device.peak_bytes = 1e9 + (d * 7919 % 101) * 1e7;  // up to 2 GB, scattered
        device.memory = {{0, device.peak_bytes}};
        sim.devices.push_back(device);
    }
    sim.devices[2500].peak_bytes = 3e9;  // the one over
    const MemoryChartData data = prepareMemoryChart(sim, 2.5e9, false);
    QCOMPARE(data.devicesPerBar, 3);
    QCOMPARE(static_cast<int>(data.barPeaks.size()), 1667);
    for (int bar = 0; bar < 1667; ++bar) {
        double highest = 0;
        for (int d = bar * 3; d < std::min(5000, bar * 3 + 3); ++d)
            highest = std::max(highest, sim.devices[d].peak_bytes);
        QCOMPARE(data.barPeaks[bar], highest);
    }
    QCOMPARE(data.devicesOverBudget, 1);
    QCOMPARE(data.fullestDevice, 2500);
    MemoryChart chart;
    chart.resize(900, 500);
    chart.setMemory(std::make_shared<const MemoryChartData>(data));
    auto* within = qobject_cast<QCPBars*>(chart.peakPlot()->plottable(0));
    auto* over = qobject_cast<QCPBars*>(chart.peakPlot()->plottable(1));
    QCOMPARE(within->data()->size() + over->data()->size(), 1667);
    QCOMPARE(over->data()->size(), 1);
    QCOMPARE(over->data()->constBegin()->key, 2500.0);  // devices 2499-2501, centred on 2500
    QCOMPARE(over->width(), 3.0);
    QCOMPARE(chart.devicesOverLimit(), 1);
    QVERIFY2(chart.overLimitText().contains("1 device over"), qPrintable(chart.overLimitText()));
}

QTEST_MAIN(MemoryChartTest)
#include "tst_memory_chart.moc"
