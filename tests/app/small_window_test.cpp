// The charts at the smallest window the workbench is made for, 1024×700, and at the size it
// opens at, as a user sees them (issue 31): every bundled example's memory charts keep a plot
// area to read, no two tick labels overlap on any chart, and the limit is named where it
// covers nothing: in the legend, inside the widget, clear of every bar and curve point (issue
// 39: its label on the line covered them). ctest runs this
// twice: as is, and with QT_SCALE_FACTOR=2 (device pixel ratio 2, where fonts and the window
// are twice as many pixels), which must read the same.
//
// Label rectangles are worked out here from each axis's tick vectors and the font's metrics,
// as QCustomPlot's axis painter places them, not read back from the code that spaces them.
#include <QDir>
#include <QFontMetrics>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

#include "app/gui/MainWindow.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");
const QSize kSmallest(1024, 700);
// The least plot area (axis rect) a memory chart keeps at 1024×700, in pixels.
constexpr int kMinCurvesHeight = 80;
constexpr int kMinPeaksHeight = 50;
constexpr int kMinWidth = 400;

// The drawn tick labels of `axis`, as rectangles in the plot's pixels.
QList<QRectF> labelRects(const QCPAxis* axis) {
    QList<QRectF> rects;
    const QFontMetrics metrics(axis->tickLabelFont());
    const QVector<double> ticks = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    const QRect area = axis->axisRect()->rect();
    for (qsizetype i = 0; i < ticks.size() && i < labels.size(); ++i) {
        if (!axis->range().contains(ticks[i]) || labels[i].isEmpty()) continue;
        const QSizeF size = metrics.boundingRect(labels[i]).size();
        const double at = axis->coordToPixel(ticks[i]);
        const double gap = axis->tickLengthOut() + axis->tickLabelPadding();
        rects.append(
            axis->orientation() == Qt::Horizontal
                ? QRectF(at - size.width() / 2, area.bottom() + gap, size.width(), size.height())
                : QRectF(area.left() - gap - size.width(), at - size.height() / 2, size.width(), size.height()));
    }
    return rects;
}

// "" when no two labels of `axis` overlap, else which two.
QString overlapOf(const QCPAxis* axis) {
    const QList<QRectF> rects = labelRects(axis);
    const QVector<QString> labels = axis->tickVectorLabels();
    for (qsizetype a = 0; a < rects.size(); ++a)
        for (qsizetype b = a + 1; b < rects.size(); ++b)
            if (rects[a].intersects(rects[b]))
                return QStringLiteral("labels %1 and %2 overlap (%3 and %4 px apart along the axis)")
                    .arg(a)
                    .arg(b)
                    .arg(axis->orientation() == Qt::Horizontal ? rects[a].right() : rects[a].bottom())
                    .arg(axis->orientation() == Qt::Horizontal ? rects[b].left() : rects[b].top());
    return {};
}

// The legend entry that names the limit (or the card's memory), or nullptr.
views::SwatchLegendItem* limitEntry(const QCustomPlot* plot) {
    for (QCPAbstractLegendItem* item : views::legendItems(plot->legend))
        if (auto* entry = qobject_cast<views::SwatchLegendItem*>(item);
            entry && (entry->text().contains("limit") || entry->text().contains("card")))
            return entry;
    return nullptr;
}

// What the plot draws as data, in its pixels: each bar's rectangle and each curve point, from
// the plottables' data through the axes (not from the chart's layout code).
QList<QRectF> dataRects(QCustomPlot* plot) {
    QList<QRectF> rects;
    for (int p = 0; p < plot->plottableCount(); ++p) {
        if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(p))) {
            for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
                rects.append(QRectF(QPointF(plot->xAxis->coordToPixel(it->key - bars->width() / 2),
                                            plot->yAxis->coordToPixel(it->value)),
                                    QPointF(plot->xAxis->coordToPixel(it->key + bars->width() / 2),
                                            plot->yAxis->coordToPixel(0)))
                                 .normalized());
        } else if (auto* graph = qobject_cast<QCPGraph*>(plot->plottable(p))) {
            for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
                rects.append(QRectF(plot->xAxis->coordToPixel(it->key), plot->yAxis->coordToPixel(it->value), 1, 1));
        }
    }
    return rects;
}

}  // namespace

class SmallWindowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void theChartsAreReadable_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QSize>("size");
        const QStringList examples = QDir(kExamples).entryList({"*.config.json"}, QDir::Files, QDir::Name);
        QVERIFY(examples.size() >= 5);
        // The smallest size, and the size the window opens at (where "limit 40 GB" was cut).
        for (const QSize size : {kSmallest, QSize(1500, 950)})
            for (const QString& name : examples)
                QTest::newRow(qPrintable(QStringLiteral("%1 at %2x%3").arg(name).arg(size.width()).arg(size.height())))
                    << kExamples + "/" + name << size;
    }

    void theChartsAreReadable() {
        QFETCH(QString, file);
        QFETCH(QSize, size);
        MainWindow window;
        window.document()->setSynchronous(true);
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openFile(file));
        // The scale the run was started with is the one the window got.
        const double scale =
            qEnvironmentVariableIsSet("QT_SCALE_FACTOR") ? qEnvironmentVariable("QT_SCALE_FACTOR").toDouble() : 1;
        QCOMPARE(window.devicePixelRatioF(), scale);
        QTest::qWait(50);  // the layouts and replots that showing and opening queued
        views::MemoryChart* memory = window.memoryChart();
        // The charts replot at the next paint and the layout learns their minimums then: at
        // scale 2 on a busy machine that takes a few frames.
        QTRY_VERIFY_WITH_TIMEOUT(memory->curvePlot()->axisRect()->rect().height() >= kMinCurvesHeight &&
                                     memory->peakPlot()->axisRect()->rect().height() >= kMinPeaksHeight,
                                 3000);
        for (QCustomPlot* plot : {memory->curvePlot(), memory->peakPlot(), window.gantt()->plot()}) plot->replot();
        // Nothing in the window asks for more than the window: it is still the size asked for.
        QCOMPARE(window.size(), size);

        const struct {
            QCustomPlot* plot;
            int minHeight;
            const char* name;
        } charts[] = {{memory->curvePlot(), kMinCurvesHeight, "memory curves"},
                      {memory->peakPlot(), kMinPeaksHeight, "peaks"}};
        for (const auto& chart : charts) {
            const QRect area = chart.plot->axisRect()->rect();
            QVERIFY2(area.height() >= chart.minHeight && area.width() >= kMinWidth,
                     qPrintable(
                         QStringLiteral("%1: a %2×%3 plot area").arg(chart.name).arg(area.width()).arg(area.height())));
            for (const QCPAxis* axis : {chart.plot->xAxis, chart.plot->yAxis}) {
                QVERIFY2(labelRects(axis).size() >= 2,
                         qPrintable(QStringLiteral("%1: fewer than two labels").arg(chart.name)));
                const QString overlap = overlapOf(axis);
                QVERIFY2(overlap.isEmpty(), qPrintable(QStringLiteral("%1: %2").arg(chart.name, overlap)));
            }
            // The limit (or the card's memory) is named where it can be read and covers
            // nothing: a legend entry inside the widget, clear of every bar and curve point, and
            // no text drawn inside the plot area.
            const views::SwatchLegendItem* entry = limitEntry(chart.plot);
            QVERIFY2(entry || memory->overLimitText().isEmpty(), chart.name);  // judged against a budget: named
            if (entry) {
                const QRectF box = entry->outerRect();
                QVERIFY2(QRectF(chart.plot->rect()).contains(box),
                         qPrintable(QStringLiteral("%1: \"%2\" cut off").arg(chart.name, entry->text())));
                for (const QRectF& data : dataRects(chart.plot))
                    QVERIFY2(!box.intersects(data.intersected(QRectF(area))),
                             qPrintable(QStringLiteral("%1: \"%2\" at y %3..%4 covers data at y %5..%6")
                                            .arg(chart.name, entry->text())
                                            .arg(box.top())
                                            .arg(box.bottom())
                                            .arg(data.top())
                                            .arg(data.bottom())));
            }
            for (int i = 0; i < chart.plot->itemCount(); ++i)
                QVERIFY2(!qobject_cast<QCPItemText*>(chart.plot->item(i)),
                         qPrintable(QStringLiteral("%1: text drawn over the data").arg(chart.name)));
        }
        // The Gantt's time axis above them reads as well.
        const QString ganttOverlap = overlapOf(window.gantt()->plot()->xAxis);
        QVERIFY2(ganttOverlap.isEmpty(), qPrintable(ganttOverlap));
    }

    // The binary renders the window at a size asked for (how these pictures are looked at),
    // in as many pixels as the scale makes of it; a size it cannot use is one line and exit 2.
    void screenshotTakesASize() {
        QTemporaryDir dir;
        const QString out = dir.filePath("small.png");
        QProcess shot;
        shot.start(MARIO_WORKBENCH_BIN,
                   {kExamples + "/figure2.config.json", "--screenshot", out, "--size", "1024x700"});
        QVERIFY(shot.waitForFinished(60000));
        QCOMPARE(shot.exitCode(), 0);
        const double scale =
            qEnvironmentVariableIsSet("QT_SCALE_FACTOR") ? qEnvironmentVariable("QT_SCALE_FACTOR").toDouble() : 1;
        QCOMPARE(QImage(out).size(), kSmallest * scale);
        shot.start(MARIO_WORKBENCH_BIN, {kExamples + "/figure2.config.json", "--screenshot", out, "--size", "big"});
        QVERIFY(shot.waitForFinished(60000));
        QCOMPARE(shot.exitCode(), 2);
        QVERIFY(shot.readAllStandardError().contains("--size: expected WxH"));
    }
};

QTEST_MAIN(SmallWindowTest)
#include "small_window_test.moc"
