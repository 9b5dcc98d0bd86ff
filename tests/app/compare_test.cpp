// The compare window (issue 14, item 6): which instructions differ between two schedules,
// worked out by hand on 1F1B against GPipe (2 devices, 2 micro-batches, F = 1, B = 2); the
// outlines, the per-device line and table, the memory charts under both Gantts, and one time
// axis for all four charts under real key presses. Offscreen.
#include <QCheckBox>
#include <QLabel>
#include <QtTest>
#include <qcustomplot.h>

#include <algorithm>

#include "app/gui/CompareWindow.h"
#include "app/gui/DeviceComparisonTable.h"
#include "app/gui/ScheduleDifference.h"
#include "core/io/PresetLibrary.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleFiles.h"
#include "core/sim/Simulator.h"
#include "core/util/HumanBytes.h"
#include "tests/common/ProgramLookup.h"
#include "tests/common/UnitPlans.h"
#include "views/GanttPlottable.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"
#include "views/TickSpacing.h"

using namespace mario;
using namespace mario::gui;

namespace {

NamedSchedule schedule(const char* name, Scheme scheme, bool curves = true) {
    NamedSchedule s;
    s.name = name;
    s.plan = *test::makeUnitPlan(scheme, 2, 2);
    s.result = *Simulator::run(s.plan, SimOptions{.record_memory_curve = curves});
    return s;
}

views::BoxRef box(const Plan& plan, int device, const char* action) {
    return {device, test::indexOf(plan, device, action)};
}

bool sameBoxes(std::vector<views::BoxRef> got, std::vector<views::BoxRef> expected) {
    auto order = [](const views::BoxRef& x, const views::BoxRef& y) {
        return std::pair(x.lane, x.program_index) < std::pair(y.lane, y.program_index);
    };
    std::sort(got.begin(), got.end(), order);
    std::sort(expected.begin(), expected.end(), order);
    return got == expected;
}

}  // namespace

class CompareTest : public QObject {
    Q_OBJECT

private slots:
    // By hand, F = 1, B = 2, no latency:
    //   1F1B   device 0: 0F0 [0,1] 0F1 [1,2] 0B0 [4,6] 0B1 [7,9]
    //          device 1: 1F0 [1,2] 1B0 [2,4] 1F1 [4,5] 1B1 [5,7]
    //   GPipe  device 0: 0F0 [0,1] 0F1 [1,2] 0B0 [5,7] 0B1 [7,9]
    //          device 1: 1F0 [1,2] 1F1 [2,3] 1B0 [3,5] 1B1 [5,7]
    // Device 0 keeps its order; only 0B0 starts later (4 vs 5). Device 1's order among the
    // four: F0 B0 F1 B1 against F0 F1 B0 B1, so B0 and F1 moved; F0 and B1 start alike.
    // REDUCE_GRAD and OPT end both steps at the same times (9 and 7).
    void differencesWorkedByHand() {
        const NamedSchedule a = schedule("1F1B", Scheme::OneFOneB), b = schedule("GPipe", Scheme::GPipe);
        QCOMPARE(a.result.makespan_ms, 9.0);
        QCOMPARE(b.result.makespan_ms, 9.0);
        const ScheduleDifference diff = compareSchedules(a.plan, a.result, b.plan, b.result);
        QCOMPARE(static_cast<int>(diff.devices.size()), 2);
        QCOMPARE(diff.devices[0].moved, 0);
        QCOMPARE(diff.devices[0].retimed, 1);
        QCOMPARE(diff.devices[1].moved, 2);
        QCOMPARE(diff.devices[1].retimed, 0);
        QCOMPARE(diff.total(), 3);
        QVERIFY(sameBoxes(diff.inA, {box(a.plan, 0, "0B0"), box(a.plan, 1, "1B0"), box(a.plan, 1, "1F1")}));
        QVERIFY(sameBoxes(diff.inB, {box(b.plan, 0, "0B0"), box(b.plan, 1, "1B0"), box(b.plan, 1, "1F1")}));
        const QString text = describeDifferences(diff);
        QVERIFY2(text.startsWith("3 compute instructions differ"), qPrintable(text));
        QVERIFY2(text.contains("2 moved in their device's order, 1 start at another time"), qPrintable(text));
        QVERIFY2(text.contains("device 0: 1, device 1: 2"), qPrintable(text));
    }

    void aScheduleAgainstItselfHasNoDifference() {
        const NamedSchedule a = schedule("1F1B", Scheme::OneFOneB);
        const ScheduleDifference diff = compareSchedules(a.plan, a.result, a.plan, a.result);
        QCOMPARE(diff.total(), 0);
        QVERIFY(diff.inA.empty() && diff.inB.empty());
        QVERIFY(describeDifferences(diff).startsWith("Both schedules"));
    }

    // An instruction one schedule lacks is a difference of its own, outlined where it exists.
    void anInstructionOnlyOneScheduleHas() {
        const NamedSchedule a = schedule("1F1B", Scheme::OneFOneB);
        NamedSchedule b = a;
        auto& program = b.plan.devices[1].program;
        const int opt = test::indexOf(b.plan, 1, "1OPT");
        QVERIFY(opt >= 0);
        program.erase(program.begin() + opt);
        b.result = *Simulator::run(b.plan);
        const ScheduleDifference diff = compareSchedules(a.plan, a.result, b.plan, b.result);
        QCOMPARE(diff.devices[1].onlyInA, 1);
        QCOMPARE(diff.total(), 1);
        QVERIFY(sameBoxes(diff.inA, {box(a.plan, 1, "1OPT")}));
        QVERIFY(diff.inB.empty());
    }

    void theWindowOutlinesCountsAndTabulates() {
        // B is simulated without memory curves, as the main window's base schedule is.
        const NamedSchedule a = schedule("1F1B", Scheme::OneFOneB), b = schedule("GPipe", Scheme::GPipe, false);
        CompareWindow window;
        window.setSchedules(a, b, views::TimeBase::Units);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.outlineBox()->isChecked());  // 1 and 2 per device: few enough to outline at once
        QVERIFY(sameBoxes(window.top()->boxesPlottable()->highlights(),
                          {box(a.plan, 0, "0B0"), box(a.plan, 1, "1B0"), box(a.plan, 1, "1F1")}));
        QCOMPARE(window.bottom()->boxesPlottable()->highlights().size(), std::size_t{3});
        QVERIFY2(window.differencesPerDeviceText().contains("device 0: 1, device 1: 2"),
                 qPrintable(window.differencesPerDeviceText()));

        // Both memory charts have a curve per device; B's were simulated by the window. Unit
        // plans hold 1000 bytes per forward's activations: device 0 of 1F1B holds two at t = 2,
        // GPipe's device 1 two as well (F0 and F1 before B0).
        for (views::MemoryChart* chart : {window.topMemory(), window.bottomMemory()}) {
            QCOMPARE(static_cast<int>(chart->curves().size()), 2);
            for (const auto& curve : chart->curves()) QVERIFY(!curve.empty());
        }
        auto peakOf = [](const std::vector<MemoryPoint>& curve) {
            double top = 0;
            for (const MemoryPoint& p : curve) top = std::max(top, p.bytes);
            return top;
        };
        QCOMPARE(peakOf(window.topMemory()->curves()[0]), 2000.0);
        QCOMPARE(peakOf(window.topMemory()->curves()[1]), 1000.0);
        QCOMPARE(peakOf(window.bottomMemory()->curves()[1]), 2000.0);

        // The table: device, differing, peaks and idle time (busy 1+1+2+2 = 6 of 9: idle 3).
        DeviceComparisonTable* table = window.deviceTable();
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->item(0, DeviceComparisonTable::Differ)->text(), QStringLiteral("1"));
        QCOMPARE(table->item(1, DeviceComparisonTable::Differ)->text(), QStringLiteral("2"));
        QCOMPARE(table->item(1, DeviceComparisonTable::PeakA)->text(), QString::fromStdString(humanBytes(1000)));
        QCOMPARE(table->item(1, DeviceComparisonTable::PeakB)->text(), QString::fromStdString(humanBytes(2000)));
        QCOMPARE(table->item(0, DeviceComparisonTable::IdleA)->text(),
                 views::formatDuration(3, views::TimeBase::Units));
    }

    // W zooms the chart under the cursor; the other Gantt and both memory charts follow.
    void oneTimeAxisForAllFourCharts() {
        const NamedSchedule a = schedule("1F1B", Scheme::OneFOneB), b = schedule("GPipe", Scheme::GPipe);
        CompareWindow window;
        window.setSchedules(a, b, views::TimeBase::Units);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QWidget* plot = window.top()->plotWidget();
        const double before = window.top()->plot()->xAxis->range().size();
        QTest::mouseMove(plot, plot->rect().center());
        plot->setFocus();
        QTest::keyClick(plot, Qt::Key_W);
        QTRY_VERIFY(window.top()->plot()->xAxis->range().size() < before);
        const QCPRange zoomed = window.top()->plot()->xAxis->range();
        QTRY_COMPARE(window.bottom()->plot()->xAxis->range().lower, zoomed.lower);
        QTRY_COMPARE(window.topMemory()->curvePlot()->xAxis->range().upper, zoomed.upper);
        QTRY_COMPARE(window.bottomMemory()->curvePlot()->xAxis->range().lower, zoomed.lower);
    }

    // Equal heights are equal bytes: A (1F1B, 2 devices, 2 micro-batches) peaks at 2000 bytes,
    // B (GPipe, 4 micro-batches) holds all four forwards' activations on device 0: 4000 bytes.
    // Both charts are in KB and reach 4 KB plus their headroom (×1.1 for the curves, ×1.15
    // for the peak bars), A's too; on one time axis.
    void bothMemoryChartsShareOneScale() {
        const NamedSchedule a = schedule("1F1B", Scheme::OneFOneB);
        NamedSchedule b;
        b.name = "GPipe ×4";
        b.plan = *test::makeUnitPlan(Scheme::GPipe, 2, 4);
        b.result = *Simulator::run(b.plan, SimOptions{.record_memory_curve = true});
        CompareWindow window;
        window.setSchedules(a, b, views::TimeBase::Units);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        views::MemoryChart* top = window.topMemory();
        views::MemoryChart* bottom = window.bottomMemory();
        QCOMPARE(top->unitName(), QStringLiteral("KB"));
        QCOMPARE(bottom->unitName(), QStringLiteral("KB"));
        for (views::MemoryChart* chart : {top, bottom}) {
            QCOMPARE(chart->curvePlot()->yAxis->range().lower, 0.0);
            QVERIFY(qFuzzyCompare(chart->curvePlot()->yAxis->range().upper, 4.0 * 1.1));
            QVERIFY(qFuzzyCompare(chart->peakPlot()->yAxis->range().upper, 4.0 * 1.15));
        }
        // A's own peak is half of that: its tallest curve reaches half the shared height.
        double peakA = 0;
        for (const auto& curve : top->curves())
            for (const MemoryPoint& p : curve) peakA = std::max(peakA, p.bytes);
        QCOMPARE(peakA, 2000.0);
        QCOMPARE(top->curvePlot()->xAxis->range().lower, bottom->curvePlot()->xAxis->range().lower);
        QCOMPARE(top->curvePlot()->xAxis->range().upper, bottom->curvePlot()->xAxis->range().upper);
    }

    // The bundled examples against their base, as View → Compare with the base schedule opens
    // them: the base simulated without curves, both memory charts filled, and screenshots to
    // look at (/tmp/compare_NAME.png).
    void exampleAgainstItsBase_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("outlinedAtOnce");
        // Figure 2's passes move a few instructions per device; Chimera's 133 or more.
        QTest::newRow("figure2") << "figure2" << true;
        QTest::newRow("gpt3-13b-chimera") << "gpt3-13b-chimera" << false;
    }
    void exampleAgainstItsBase() {
        QFETCH(QString, name);
        QFETCH(bool, outlinedAtOnce);
        auto presets = PresetLibrary::locate();
        QVERIFY(presets.ok());
        const QString path = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/%1.config.json").arg(name);
        const OpenedSchedule opened = openSchedule(path.toStdString(), *presets);
        QVERIFY2(opened.ok(), opened.error.c_str());
        auto mine = prepareSchedule(opened.input, {.record_memory_curve = true});
        QVERIFY(mine.ok());
        auto base = Simulator::run(opened.input.source);
        QVERIFY(base.ok());
        const auto timeBase = name == "figure2" ? views::TimeBase::Units : views::TimeBase::Milliseconds;
        CompareWindow window;
        window.setSchedules({"this schedule", mine->plan, mine->result},
                            {"the base schedule", opened.input.source, *base}, timeBase);
        window.resize(1500, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.difference().total() > 0);
        QCOMPARE(window.bottomMemory()->curves().size(), opened.input.source.devices.size());
        QCOMPARE(window.deviceTable()->rowCount(), static_cast<int>(opened.input.source.devices.size()));
        bool few = true;
        for (const DeviceDifference& d : window.difference().devices)
            few = few && d.total() <= CompareWindow::kOutlinedPerDeviceByDefault;
        QCOMPARE(few, outlinedAtOnce);
        QCOMPARE(window.outlineBox()->isChecked(), outlinedAtOnce);
        QCOMPARE(window.top()->boxesPlottable()->highlights().empty(), !outlinedAtOnce);
        window.grab().save(QStringLiteral("/tmp/compare_%1.png").arg(name));
        // Each peak chart's axis reads as a scale: three or more labelled ticks, increasing from
        // zero, apart (only "0" or "0 2.5" was drawn: a 40 px plot too short for more labels).
        for (views::MemoryChart* chart : {window.topMemory(), window.bottomMemory()}) {
            QCPAxis* axis = chart->peakPlot()->yAxis;
            QVector<double> shown;
            for (qsizetype i = 0; i < axis->tickVector().size(); ++i)
                if (axis->range().contains(axis->tickVector()[i])) shown.append(axis->tickVector()[i]);
            qInfo("peak axis %g..%g %s, %lld px: %s", axis->range().lower, axis->range().upper,
                  qPrintable(chart->unitName()), static_cast<long long>(chart->peakPlot()->axisRect()->height()),
                  qPrintable(axis->tickVectorLabels().join(' ')));
            QVERIFY2(shown.size() >= 3, qPrintable(axis->tickVectorLabels().join(' ')));
            QVERIFY(shown[1] > 0);
            QVERIFY(std::is_sorted(shown.begin(), shown.end()));
            QVERIFY(std::adjacent_find(shown.begin(), shown.end()) == shown.end());
            QVERIFY(!views::labelsCrowded(views::tickLabelRects(axis), true, 1));
        }
        // Ticking the box outlines them all; unticking clears them.
        const QPoint tick(8, window.outlineBox()->height() / 2);
        QTest::mouseClick(window.outlineBox(), Qt::LeftButton, {}, tick);
        QCOMPARE(window.outlineBox()->isChecked(), !outlinedAtOnce);
        if (!outlinedAtOnce) {
            QCOMPARE(window.top()->boxesPlottable()->highlights().size(), window.difference().inA.size());
            QCOMPARE(window.bottom()->boxesPlottable()->highlights().size(), window.difference().inB.size());
        }
        QTest::mouseClick(window.outlineBox(), Qt::LeftButton, {}, tick);
        QCOMPARE(window.top()->boxesPlottable()->highlights().size(),
                 outlinedAtOnce ? window.difference().inA.size() : std::size_t{0});
        qInfo("%s", qPrintable(window.differencesPerDeviceText()));
    }
};

QTEST_MAIN(CompareTest)
#include "compare_test.moc"
