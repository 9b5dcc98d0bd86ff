// The workbench window as a user reads and keeps its results (offscreen): the summary's
// verdicts against the card and on contention, the compare window, a malformed file, every
// export, and the binary's screenshot mode. Driving it (toggles, drags, stepper):
// workbench_test.cpp.
#include <QImage>
#include <QJsonArray>
#include <QProcess>
#include <QPushButton>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "app/gui/CompareWindow.h"
#include "app/gui/MainWindow.h"
#include "app/gui/SummaryPanel.h"
#include "tests/app/JsonFiles.h"
#include "views/GanttView.h"
#include "views/TimeBase.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kFigure2 = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/figure2.config.json");

}  // namespace

class WorkbenchOutputsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void compareShowsBothSchedulesOnOneTimeAxis() {
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(kFigure2));
        CompareWindow* compare = window.compareWithBase();
        QVERIFY(compare);
        QCOMPARE(compare->top()->timeline().makespan, 22.0);
        QCOMPARE(compare->bottom()->timeline().makespan, 21.0);
        QVERIFY2(compare->differenceText().contains("step 22 units vs 21 units (+4.8%)"),
                 qPrintable(compare->differenceText()));
        QVERIFY2(compare->differenceText().contains("1.03 KB vs 4.00 KB"), qPrintable(compare->differenceText()));
        compare->top()->setTimeRange(2, 9);
        QCOMPARE(compare->bottom()->pointAt(0, 2).x(), compare->top()->pointAt(0, 2).x());
        QCOMPARE(compare->bottom()->pointAt(0, 9).x(), compare->top()->pointAt(0, 9).x());
        // Against another file: the LLaMA-2 example has 8 devices.
        compare = window.compareWithFile(
            QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/llama2-13b-1f1b.config.json"));
        QVERIFY(compare);
        QCOMPARE(compare->bottom()->timeline().lanes.size(), std::size_t(8));
        QVERIFY(!window.compareWithFile("/nonexistent.json"));
        QVERIFY(window.errorText().contains("cannot open"));
    }

    void openingAMalformedFileShowsAnErrorAndKeepsTheSession() {
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(kFigure2));
        QTemporaryDir dir;
        const QString bad = dir.filePath("broken.mario.json");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"format\": \"mario-plan\",, }");
        file.close();
        QVERIFY(!window.openFile(bad));
        QVERIFY2(window.errorText().contains("malformed JSON"), qPrintable(window.errorText()));
        QCOMPARE(window.summary()->stepTimeText(), QStringLiteral("step 22 units"));
        QCOMPARE(window.document()->current().plan.devices.size(), std::size_t(4));
    }

    void exportsWriteValidFiles() {
        MainWindow window;
        window.document()->setSynchronous(true);
        window.resize(1200, 800);
        QVERIFY(window.openFile(kFigure2));
        QTemporaryDir dir;
        for (const char* name : {"chart.png", "chart.svg", "chart.pdf", "trace.json", "plan.csv"}) {
            const QString path = dir.filePath(name);
            // The CSV asks before leaving the Rs out (window_teaching_test): export without them.
            if (path.endsWith(".csv"))
                QTimer::singleShot(0, [] {
                    if (QWidget* box = QApplication::activeModalWidget())
                        if (auto* without = box->findChild<QPushButton*>("exportWithout")) without->click();
                });
            QVERIFY2(window.exportTo(path), qPrintable(window.errorText()));
            QVERIFY2(QFileInfo(path).size() > 100, name);
        }
        QVERIFY(!QImage(dir.filePath("chart.png")).isNull());
        QFile svg(dir.filePath("chart.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().contains("<svg"));
        QFile pdf(dir.filePath("chart.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");
        QFile trace(dir.filePath("trace.json"));
        QVERIFY(trace.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(trace.readAll()).object().contains("traceEvents"));
        QFile csv(dir.filePath("plan.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QCOMPARE(QString(csv.readAll()).count('\n'), 4);
        // Figure 2 with the paper's passes recomputes: the CSV leaves the Rs out, and prepose with
        // them (1F1B holds at most 4 forwards: the order must not run them early), and says so.
        const QString said = window.statusBar()->currentMessage();
        QVERIFY2(said.contains("recomputations (R) dropped") && said.contains("prepose left out"), qPrintable(said));
        QVERIFY2(said.contains("torchtitan settings in"), qPrintable(said));
        QFile args(dir.filePath("plan.torchtitan.args"));
        QVERIFY(args.open(QIODevice::ReadOnly));
        QVERIFY(args.readAll().contains("--parallelism.pipeline_parallel_schedule=1F1B"));
        QVERIFY(!window.exportTo(dir.filePath("chart.bmp")));
        QVERIFY(window.errorText().contains("unknown export format"));
    }

    // Without a memory limit the summary judges the peaks against one card, red when over:
    // LLaMA-2 13B 1F1B on 8 A100-40G with no passes. The expected count comes from the
    // simulated peaks and the preset's memory_gb, read here from its file.
    void theSummaryJudgesThePeaksAgainstTheCardWithoutALimit() {
        QJsonObject config = test::readJsonObject(MARIO_TEST_SOURCE_DIR "/resources/examples/llama2-13b-1f1b.config.json");
        config.remove("memory_limit_gb");
        config["hardware"] = "a100-40g";
        config["passes"] = QJsonArray();
        QTemporaryDir dir;
        const QString path = dir.filePath("nolimit.config.json");
        QVERIFY(test::writeJsonObject(path, config));
        const double cardGb =
            test::readJsonObject(MARIO_TEST_SOURCE_DIR "/profiles/hardware/a100-40g.json")["memory_gb"].toDouble();
        QVERIFY(cardGb > 0);
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY2(window.openFile(path), qPrintable(window.errorText()));
        int over = 0;
        for (const DeviceStats& device : window.document()->current().result.devices)
            over += device.peak_bytes > cardGb * 1e9;
        QVERIFY(over > 0);
        const QString verdict = QStringLiteral("%1 device(s) over one card's %2 GB").arg(over).arg(cardGb, 0, 'f', 2);
        const QString details = window.summary()->detailsText();
        QVERIFY2(details.contains("no limit set: <span style='color:#b00020'><b>" + verdict + "</b></span>"),
                 qPrintable(details));
        QVERIFY2(window.headlineText().contains(verdict), qPrintable(window.headlineText()));
        // The device table marks the same devices, and says against what.
        auto* table = window.summary()->findChild<QTableView*>("deviceTable");
        QVERIFY(table);
        int marked = 0;
        for (int row = 0; row < table->model()->rowCount(); ++row)
            marked += table->model()->index(row, 2).data(Qt::ToolTipRole).toString().startsWith("over one card's");
        QCOMPARE(marked, over);
        // A limit takes over from the card, as in `mario simulate`.
        config["memory_limit_gb"] = 1000;
        QVERIFY(test::writeJsonObject(path, config));
        QVERIFY(window.openFile(path));
        QVERIFY2(window.summary()->detailsText().contains("fits the 1.00 TB limit"),
                 qPrintable(window.summary()->detailsText()));
        QVERIFY(!window.summary()->detailsText().contains("card"));
    }

    // A plan whose devices share one GPU (an H200 fidelity run's plan, every stage's contention
    // set): the summary says what contention added, the number the simulation reports.
    void theSummarySaysWhatContentionAdded() {
        QJsonObject plan =
            test::readJsonObject(MARIO_TEST_SOURCE_DIR "/tests/bench/data/h200-2026-11-26/1f1b-4-none.mario.json");
        QJsonArray stages = plan["stages"].toArray();
        for (auto&& stage : stages) {
            QJsonObject s = stage.toObject();
            s["contention"] = 0.25;
            stage = s;
        }
        plan["stages"] = stages;
        QTemporaryDir dir;
        const QString path = dir.filePath("shared.mario.json");
        QVERIFY(test::writeJsonObject(path, plan));
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY2(window.openFile(kFigure2), qPrintable(window.errorText()));
        QVERIFY(!window.summary()->detailsText().contains("contention"));
        QVERIFY2(window.openFile(path), qPrintable(window.errorText()));
        const SimResult& result = window.document()->current().result;
        QVERIFY(result.contention_rounds > 0);
        QVERIFY(result.contention_ms > 0);
        const QString details = window.summary()->detailsText();
        QVERIFY2(details.contains("devices share hardware: contention adds " +
                                  views::formatDuration(result.contention_ms, views::TimeBase::Milliseconds, 4)),
                 qPrintable(details));
    }

    void screenshotModeWritesANonEmptyPng() {
        QTemporaryDir dir;
        const QString out = dir.filePath("shot.png");
        QProcess process;
        process.start(QStringLiteral(MARIO_WORKBENCH_BIN), {kFigure2, "--screenshot", out});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 0);
        const QImage image(out);
        QVERIFY(!image.isNull());
        QCOMPARE(image.width(), 1600);
        // Not a blank canvas: the Gantt boxes bring many distinct colours.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
        QVERIFY(colours.size() > 10);
    }

    void screenshotOfAMalformedFileFailsWithOneLine() {
        QTemporaryDir dir;
        QFile file(dir.filePath("bad.json"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("[1,2");
        file.close();
        QProcess process;
        process.start(QStringLiteral(MARIO_WORKBENCH_BIN), {file.fileName(), "--screenshot", dir.filePath("x.png")});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 2);
        QVERIFY(QString(process.readAllStandardError()).contains("malformed JSON"));
    }

    // --what-if with a key no knob has: refused in one line naming it, where the picker would
    // have kept its own knob and swept something else; a leaf name resolves as --vary's does.
    void screenshotWhatIfRefusesAnUnknownKnob() {
        QTemporaryDir dir;
        QProcess process;
        process.start(QStringLiteral(MARIO_WORKBENCH_BIN),
                      {kFigure2, "--screenshot", dir.filePath("x.png"), "--what-if", "training.bogus=1,2"});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 2);
        // Qt's own start-up notes may share stderr; the refusal is one line of its own.
        const QStringList lines = QString(process.readAllStandardError()).split('\n').filter("--what-if:");
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].contains("unknown knob \"training.bogus\""), qPrintable(lines[0]));
        QVERIFY(!QFile::exists(dir.filePath("x.png")));
    }
};

QTEST_MAIN(WorkbenchOutputsTest)
#include "workbench_outputs_test.moc"
