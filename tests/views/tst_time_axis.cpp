// Time axes and durations in the unit the magnitude asks for (issue 14: "150000 ms instead of
// 150 s"; unit costs labelled "ms"). The expected strings are written out by hand.
#include <QtTest>
#include <qcustomplot.h>

#include "tests/views/ViewTestPlans.h"
#include "views/MemoryChart.h"
#include "views/TimeAxis.h"

using namespace mario;
using namespace mario::views;

class TimeAxisTest : public QObject {
    Q_OBJECT
private slots:
    void formatsDurations_data();
    void formatsDurations();
    void picksTheSpanUnit();
    void labelsTicksInTheSpanUnit_data();
    void labelsTicksInTheSpanUnit();
    void followsZoom();
    void applyingTwiceKeepsOneTicker();
    void memoryChartTakesTheTimeBase();

private:
    static QCustomPlot* plotWithTimeAxis(TimeBase base);
};

void TimeAxisTest::formatsDurations_data() {
    QTest::addColumn<double>("ms");
    QTest::addColumn<bool>("units");
    QTest::addColumn<QString>("text");
    QTest::newRow("150 s") << 150000.0 << false << "150 s";
    QTest::newRow("GPT-3 step") << 6028.89 << false << "6.03 s";
    QTest::newRow("unit plan") << 22.0 << true << "22 units";
    QTest::newRow("big unit plan") << 21740.0 << true << "21740 units";
    QTest::newRow("fractional units") << 2.5 << true << "2.5 units";
    QTest::newRow("microseconds") << 0.25 << false << QString::fromUtf8("250 \u00b5s");
    QTest::newRow("milliseconds") << 999.0 << false << "999 ms";
    QTest::newRow("one decimal") << 1.5 << false << "1.5 ms";
    QTest::newRow("one second") << 1000.0 << false << "1 s";
    QTest::newRow("minutes") << 750000.0 << false << "12.5 min";
    QTest::newRow("nine minutes stay seconds") << 540000.0 << false << "540 s";
    QTest::newRow("zero") << 0.0 << false << "0 ms";
}

void TimeAxisTest::formatsDurations() {
    QFETCH(double, ms);
    QFETCH(bool, units);
    QFETCH(QString, text);
    QCOMPARE(formatDuration(ms, units ? TimeBase::Units : TimeBase::Milliseconds), text);
}

void TimeAxisTest::picksTheSpanUnit() {
    QCOMPARE(timeUnitForSpan(150000, TimeBase::Milliseconds).name, QStringLiteral("s"));
    QCOMPARE(timeUnitForSpan(1500, TimeBase::Milliseconds).name, QStringLiteral("ms"));
    QCOMPARE(timeUnitForSpan(0.5, TimeBase::Milliseconds).name, QString::fromUtf8("\u00b5s"));
    QCOMPARE(timeUnitForSpan(3.6e6, TimeBase::Milliseconds).name, QStringLiteral("min"));
    QCOMPARE(timeUnitForSpan(150000, TimeBase::Units).name, QStringLiteral("units"));
    QCOMPARE(timeAxisLabel(timeUnitForSpan(6028.89, TimeBase::Milliseconds)), QStringLiteral("time (s)"));
}

QCustomPlot* TimeAxisTest::plotWithTimeAxis(TimeBase base) {
    auto* plot = new QCustomPlot;
    plot->resize(800, 300);
    applyTimeAxis(plot->xAxis, base);
    return plot;
}

void TimeAxisTest::labelsTicksInTheSpanUnit_data() {
    QTest::addColumn<double>("upper");
    QTest::addColumn<bool>("units");
    QTest::addColumn<double>("per");  // the display unit in the time base, by hand
    QTest::addColumn<QString>("label");
    QTest::newRow("150 s") << 150000.0 << false << 1000.0 << "time (s)";
    QTest::newRow("GPT-3 step") << 6028.89 << false << 1000.0 << "time (s)";
    QTest::newRow("one box") << 0.8 << false << 0.001 << QString::fromUtf8("time (\u00b5s)");
    QTest::newRow("Figure 2") << 22.0 << true << 1.0 << "time (units)";
    QTest::newRow("an hour") << 3.6e6 << false << 60000.0 << "time (min)";
    QTest::newRow("milliseconds") << 40.0 << false << 1.0 << "time (ms)";
}

void TimeAxisTest::labelsTicksInTheSpanUnit() {
    QFETCH(double, upper);
    QFETCH(bool, units);
    QFETCH(double, per);
    QFETCH(QString, label);
    std::unique_ptr<QCustomPlot> plot(plotWithTimeAxis(units ? TimeBase::Units : TimeBase::Milliseconds));
    plot->xAxis->setRange(0, upper);
    plot->replot();
    QCOMPARE(plot->xAxis->label(), label);
    const QVector<double> ticks = plot->xAxis->tickVector();
    const QVector<QString> labels = plot->xAxis->tickVectorLabels();
    QVERIFY(ticks.size() >= 3);
    QCOMPARE(labels.size(), ticks.size());
    for (int i = 0; i < ticks.size(); ++i) {
        // Each label is the tick's coordinate in the display unit, written without exponent.
        QVERIFY2(!labels[i].contains(QLatin1Char('e')), qPrintable(labels[i]));
        bool ok = false;
        const double shown = labels[i].toDouble(&ok);
        QVERIFY2(ok, qPrintable(labels[i]));
        QVERIFY2(std::abs(shown * per - ticks[i]) <= 1e-6 * upper, qPrintable(labels[i]));
    }
}

void TimeAxisTest::followsZoom() {
    std::unique_ptr<QCustomPlot> plot(plotWithTimeAxis(TimeBase::Milliseconds));
    plot->xAxis->setRange(0, 150000);
    QCOMPARE(plot->xAxis->label(), QStringLiteral("time (s)"));
    plot->xAxis->setRange(1000, 1040);  // zoomed into a few boxes
    QCOMPARE(plot->xAxis->label(), QStringLiteral("time (ms)"));
    plot->replot();
    QCOMPARE(plot->xAxis->tickVectorLabels().first(), QStringLiteral("1000"));
}

void TimeAxisTest::applyingTwiceKeepsOneTicker() {
    std::unique_ptr<QCustomPlot> plot(plotWithTimeAxis(TimeBase::Milliseconds));
    TimeAxisTicker* ticker = timeAxisTicker(plot->xAxis);
    QVERIFY(ticker);
    applyTimeAxis(plot->xAxis, TimeBase::Units);
    QCOMPARE(timeAxisTicker(plot->xAxis), ticker);
    QCOMPARE(ticker->timeBase(), TimeBase::Units);
    QCOMPARE(plot->xAxis->findChildren<QObject*>(QStringLiteral("mario-time-axis")).size(), 1);
    plot->xAxis->setRange(0, 150000);
    QCOMPARE(plot->xAxis->label(), QStringLiteral("time (units)"));
    // Someone else's ticker: applying again installs ours anew.
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerFixed>::create());
    QVERIFY(!timeAxisTicker(plot->xAxis));
    applyTimeAxis(plot->xAxis, TimeBase::Milliseconds);
    QVERIFY(timeAxisTicker(plot->xAxis));
    QCOMPARE(plot->xAxis->label(), QStringLiteral("time (s)"));
}

void TimeAxisTest::memoryChartTakesTheTimeBase() {
    MemoryChart chart;
    chart.resize(800, 500);
    // Figure 2: 1F1B 4×4 with F = 1, B = 2 units; step = 3·(p − 1) + 3·m = 21 units.
    const SimResult sim = viewtest::simulate(viewtest::unitPlan(Scheme::OneFOneB, 4, 4), true);
    QCOMPARE(sim.makespan_ms, 21.0);
    chart.setTimeBase(TimeBase::Units);
    chart.setMemory(sim, std::nullopt);
    QCOMPARE(chart.curvePlot()->xAxis->label(), QStringLiteral("time (units)"));
    chart.setTimeBase(TimeBase::Milliseconds);
    QCOMPARE(chart.curvePlot()->xAxis->label(), QStringLiteral("time (ms)"));
    chart.setTimeRange(0, 150000);
    QCOMPARE(chart.curvePlot()->xAxis->label(), QStringLiteral("time (s)"));
}

QTEST_MAIN(TimeAxisTest)
#include "tst_time_axis.moc"
