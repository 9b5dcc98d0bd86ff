// The What-if view (issue 41), driven with real keys and clicks (offscreen): Tools → What-if
// (Ctrl+I), the fields typed, Run clicked, a point clicked. The numbers it must show are the
// ones `mario simulate` prints for the same config, edited as a user would edit the file and
// run through the real CLI binary: never the sweep engine's own output fed back.
#include <QComboBox>
#include <QDockWidget>
#include <QJsonArray>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolTip>
#include <QtTest>
#include <qcustomplot.h>

#include "app/gui/MainWindow.h"
#include "app/gui/WhatIfPanel.h"
#include "tests/app/JsonFiles.h"
#include "views/GanttView.h"
#include "views/PlotStyle.h"
#include "views/SwatchLegendItem.h"
#include "views/WhatIfChart.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");
const QString kGpt3 = kExamples + "/gpt3-13b-chimera.config.json";  // GPT-3 13B on 32 A100-40G, 40 GB limit
const QList<int> kMicroBatchSizes = {1, 2, 3, 4, 8, 16};              // 3 does not divide the global batch of 64
const QStringList kSchemes = {"1f1b", "chimera"};
const QStringList kPassSets = {"none", "all"};

// What `mario simulate FILE --json` says of the example with these settings written into it.
struct Simulated {
    bool ran = false;
    double stepMs = 0, peakBytes = 0;
    bool fits = false;
    QString refusal;  // the CLI's one line, less "mario: FILE: "
};

Simulated simulateEdited(const QTemporaryDir& dir, int microBatchSize, const QString& scheme, const QString& passes) {
    QJsonObject config = test::readJsonObject(kGpt3);
    QJsonObject parallel = config["parallel"].toObject();
    parallel["micro_batch_size"] = microBatchSize;
    parallel["scheme"] = scheme;
    config["parallel"] = parallel;
    config["passes"] = passes == "none" ? QJsonArray() : QJsonArray{passes};
    const QString path = dir.filePath(QStringLiteral("%1-%2-%3.config.json").arg(scheme, passes).arg(microBatchSize));
    Simulated s;
    if (!test::writeJsonObject(path, config)) return s;
    QProcess cli;
    cli.start(MARIO_CLI_BIN, {"simulate", path, "--json"});
    if (!cli.waitForFinished(60000)) return s;
    if (cli.exitCode() != 0) {
        s.refusal = QString::fromUtf8(cli.readAllStandardError()).trimmed().remove("mario: " + path + ": ");
        return s;
    }
    const QJsonObject out = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
    s.ran = true;
    s.stepMs = out["makespan"].toDouble();
    s.fits = out["fits_memory"].toBool();
    for (const QJsonValue& device : out["devices"].toArray())
        s.peakBytes = std::max(s.peakBytes, device.toObject()["peak_memory_bytes"].toDouble());
    return s;
}

// Replaces a field's text as a user does: click into it, select all, type.
void typeInto(QLineEdit* edit, const QString& text) {
    QTest::mouseClick(edit, Qt::LeftButton);
    QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
    if (text.isEmpty()) QTest::keyClick(edit, Qt::Key_Delete);
    else QTest::keyClicks(edit, text);
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)) + 1e-9; }

}  // namespace

class WhatIfTest : public QObject {
    Q_OBJECT

    // The workbench on GPT-3 13B, the What-if view opened with Ctrl+I, the micro-batch sweep
    // typed in and run to its end.
    static WhatIfPanel* sweepGpt3(MainWindow& window) {
        window.document()->setSynchronous(true);
        window.resize(1600, 1000);
        window.show();
        if (!QTest::qWaitForWindowExposed(&window) || !window.openFile(kGpt3)) return nullptr;
        QTest::keyClick(&window, Qt::Key_I, Qt::ControlModifier);
        auto* panel = window.findChild<WhatIfPanel*>();
        if (!panel || !panel->isVisible()) return nullptr;
        if (panel->knobBox()->currentData().toString() != "parallel.micro_batch_size") return nullptr;
        QStringList values;
        for (int v : kMicroBatchSizes) values << QString::number(v);
        typeInto(panel->valuesEdit(), values.join(','));
        typeInto(panel->schemesEdit(), kSchemes.join(','));
        typeInto(panel->passSetsEdit(), kPassSets.join(';'));
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        if (!QTest::qWaitFor([panel] { return !panel->isRunning() && panel->result(); }, 120000)) return nullptr;
        // The layouts and replots the result queued, so that pixels worked out now are where
        // the points are drawn when the mouse arrives.
        QTest::qWait(100);
        for (QCustomPlot* plot : {panel->chart()->topPlot(), panel->chart()->mfuPlot(), panel->chart()->peakPlot()})
            plot->replot();
        return panel;
    }

    // The workbench on GPT-3 13B with the What-if view open, nothing run yet.
    static WhatIfPanel* openGpt3(MainWindow& window) {
        window.document()->setSynchronous(true);
        window.show();
        return window.openFile(kGpt3) ? window.whatIf() : nullptr;
    }

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // Issue 41's window check: one line per scheme × pass set, the limit line, the largest
    // micro-batch size that fits ringed on each line that has one, a refused size a gap whose
    // hover says what `mario simulate` says, and a click that opens the point with the step and
    // peak `mario simulate` computes for that config, undone by Ctrl+Z.
    void aMicroBatchSweepShowsEachLineTheLimitAndOpensAPoint() {
        MainWindow window;
        WhatIfPanel* panel = sweepGpt3(window);
        QVERIFY2(panel, "the sweep did not run");
        QVERIFY2(!panel->statusText().contains("cancel"), qPrintable(panel->statusText()));
        views::WhatIfChart* chart = panel->chart();
        const views::WhatIfLines& lines = chart->lines();
        QCOMPARE(int(lines.lines.size()), int(kSchemes.size() * kPassSets.size()));
        QTemporaryDir dir;
        int refusedSeen = 0;
        for (int l = 0; l < int(lines.lines.size()); ++l) {
            const views::WhatIfLine& line = lines.lines[std::size_t(l)];
            const QString scheme = kSchemes[line.scheme], passes = kPassSets[line.passSet];
            QCOMPARE(line.label, scheme + " " + passes);
            // The largest size that fits, from the CLI's verdicts on each edited config.
            std::optional<int> largest;
            for (int x = 0; x < int(kMicroBatchSizes.size()); ++x) {
                const Simulated expected = simulateEdited(dir, kMicroBatchSizes[x], scheme, passes);
                const SweepPoint& point = lines.point(line.points[std::size_t(x)]);
                QCOMPARE(point.ok(), expected.ran);
                if (expected.ran && expected.fits) largest = kMicroBatchSizes[x];
                if (expected.ran) {
                    QVERIFY(near(point.step_ms, expected.stepMs));
                    QVERIFY(near(point.peak_bytes, expected.peakBytes));
                    continue;
                }
                // Refused: a cross at the foot of each chart, and hovering it says the CLI's reason.
                ++refusedSeen;
                const auto cross = chart->pointPixel(chart->peakPlot(), l, x);
                QVERIFY(cross);
                QTest::mouseMove(chart->peakPlot(), cross->toPoint());
                QTRY_VERIFY2(QToolTip::text().contains(expected.refusal), qPrintable(QToolTip::text()));
                QVERIFY(QToolTip::text().contains("refused"));
            }
            QCOMPARE(line.largestFitting ? std::optional<int>(kMicroBatchSizes[*line.largestFitting]) : std::nullopt,
                     largest);
        }
        QCOMPARE(refusedSeen, int(kSchemes.size() * kPassSets.size()));  // size 3 on every line
        // The limit: a dashed line at 40 GB on the peak chart, named in its legend.
        QCustomPlot* peaks = chart->peakPlot();
        QCPItemStraightLine* limit = nullptr;
        for (int i = 0; i < peaks->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPItemStraightLine*>(peaks->item(i))) limit = item;
        QVERIFY(limit);
        QCOMPARE(limit->point1->coords().y(), 40.0);  // GB, the example's memory_limit_gb
        QVERIFY(peaks->yAxis->label().contains("GB"));
        bool named = false;
        for (QCPAbstractLegendItem* item : views::legendItems(peaks->legend))
            if (auto* entry = qobject_cast<views::SwatchLegendItem*>(item)) named |= entry->text() == "limit 40 GB";
        QVERIFY(named);
        // The rings: one per line with a largest fitting size, on the top chart's "largest that fits".
        QCPGraph* rings = nullptr;
        for (int g = 0; g < chart->topPlot()->graphCount(); ++g)
            if (chart->topPlot()->graph(g)->name() == "largest that fits") rings = chart->topPlot()->graph(g);
        QVERIFY(rings);
        int marked = 0;
        for (const views::WhatIfLine& line : lines.lines) marked += line.largestFitting.has_value();
        QVERIFY(marked > 0);
        QCOMPARE(rings->dataCount(), marked);

        // Click chimera with all passes at its largest fitting size: the main view opens it.
        int chimeraAll = -1;
        for (int l = 0; l < int(lines.lines.size()); ++l)
            if (lines.lines[std::size_t(l)].label == "chimera all") chimeraAll = l;
        QVERIFY(chimeraAll >= 0 && lines.lines[std::size_t(chimeraAll)].largestFitting);
        const int x = *lines.lines[std::size_t(chimeraAll)].largestFitting;
        const auto at = chart->pointPixel(chart->topPlot(), chimeraAll, x);
        QVERIFY(at);
        const int before = window.document()->undoStack()->count();
        QTest::mouseClick(chart->topPlot(), Qt::LeftButton, {}, at->toPoint());
        QTRY_COMPARE(window.document()->state().config->parallel.micro_batch_size, kMicroBatchSizes[x]);
        QCOMPARE(window.document()->undoStack()->count(), before + 1);
        const Simulated expected = simulateEdited(dir, kMicroBatchSizes[x], "chimera", "all");
        QVERIFY(expected.ran);
        const SimResult& shown = window.document()->current().result;
        QVERIFY2(near(shown.makespan_ms, expected.stepMs),
                 qPrintable(QStringLiteral("%1 vs %2 ms").arg(shown.makespan_ms).arg(expected.stepMs)));
        double peak = 0;
        for (const DeviceStats& device : shown.devices) peak = std::max(peak, device.peak_bytes);
        QVERIFY2(near(peak, expected.peakBytes), qPrintable(QStringLiteral("%1 vs %2").arg(peak).arg(expected.peakBytes)));
        QVERIFY(panel->statusText().startsWith("Opened"));
        // Undoable like the tuner's double-click: Ctrl+Z in the chart brings the example back.
        window.gantt()->plot()->setFocus();
        QTest::keyClick(window.gantt()->plot(), Qt::Key_Z, Qt::ControlModifier);
        QTRY_COMPARE(window.document()->state().config->parallel.micro_batch_size, 1);
    }

    // A big sweep (4096 micro-batches a point at the end) cancelled at once: the window gets
    // its result back with the points not run said so, and never blocks meanwhile.
    void cancelStopsTheSweepAndSaysSo() {
        MainWindow window;
        WhatIfPanel* panel = openGpt3(window);
        QVERIFY(panel);
        typeInto(panel->valuesEdit(), "64:4096:64");
        panel->knobBox()->setCurrentIndex(panel->knobBox()->findData("parallel.global_batch_size"));
        typeInto(panel->schemesEdit(), "1f1b,chimera");
        typeInto(panel->passSetsEdit(), "all");
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QVERIFY(panel->isRunning());
        QVERIFY(panel->cancelButton()->isEnabled());
        QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isRunning(), 60000);
        QVERIFY(panel->result());
        QVERIFY(panel->result()->cancelled);
        int notRun = 0;
        for (const SweepPoint& point : panel->result()->points) notRun += !point.evaluated;
        QVERIFY(notRun > 0);
        QVERIFY2(panel->statusText().contains("cancelled"), qPrintable(panel->statusText()));
        QVERIFY(panel->runButton()->isEnabled());
    }

    // A field the CLI would refuse is refused with the CLI's line, and nothing runs.
    void aBadFieldIsOneLineAndNothingRuns() {
        MainWindow window;
        WhatIfPanel* panel = openGpt3(window);
        QVERIFY(panel);
        typeInto(panel->valuesEdit(), "4:1");
        QTest::keyClick(panel->valuesEdit(), Qt::Key_Return);
        QVERIFY(!panel->isRunning());
        QVERIFY(!panel->statusText().isEmpty() && !panel->statusText().contains('\n'));
        QVERIFY2(panel->statusText().contains("micro_batch_size"), qPrintable(panel->statusText()));
        typeInto(panel->valuesEdit(), "1,2");
        typeInto(panel->schemesEdit(), "1f1b,nosuch");
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QVERIFY(!panel->isRunning());
        QVERIFY2(panel->statusText().contains("nosuch"), qPrintable(panel->statusText()));
    }

    // PNG, SVG and PDF of the charts, and the CSV of `mario sweep --csv`: one header line and a
    // line per point (values × schemes × pass sets, counted here).
    void exportsTheChartsAndThePoints() {
        MainWindow window;
        WhatIfPanel* panel = sweepGpt3(window);
        QVERIFY(panel);
        QTemporaryDir dir;
        for (const char* name : {"sweep.png", "sweep.svg", "sweep.pdf", "sweep.csv"}) {
            const QString path = dir.filePath(name);
            QVERIFY2(panel->exportTo(path), qPrintable(panel->statusText()));
            QVERIFY2(QFileInfo(path).size() > 100, name);
        }
        QVERIFY(!QImage(dir.filePath("sweep.png")).isNull());
        QFile csv(dir.filePath("sweep.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList rows = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 1 + int(kMicroBatchSizes.size() * kSchemes.size() * kPassSets.size()));
        QVERIFY(rows.first().startsWith("parallel.micro_batch_size,"));
        QVERIFY(!panel->exportTo(dir.filePath("sweep.bmp")));
        QVERIFY(panel->statusText().contains("unknown export format"));
    }

    // A plan has no config to vary: Run is off and says why.
    void aPlanCannotBeSwept() {
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(MARIO_TEST_SOURCE_DIR "/tests/bench/data/h200-2026-11-26/1f1b-4-none.mario.json"));
        WhatIfPanel* panel = window.whatIf();
        QVERIFY(!panel->runButton()->isEnabled());
        QVERIFY(panel->runButton()->toolTip().contains("config"));
        QVERIFY(!panel->run());
        QVERIFY(panel->statusText().contains("config"));
    }
};

QTEST_MAIN(WhatIfTest)
#include "what_if_test.moc"
