// The schedule tuner window, driven as a user would (offscreen): a run fills the table in the
// tuner's own ranking and ends the curve on the best throughput; cancel is prompt; a
// double-click opens a candidate's schedule; plan files cannot be tuned.
#include <QCheckBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

#include "app/gui/MainWindow.h"
#include "app/gui/TuneResultModel.h"
#include "app/gui/TuneResultSortProxy.h"
#include "app/gui/TunerPanel.h"
#include "core/io/ConfigJson.h"
#include "core/io/PlanJson.h"
#include "core/session/PreparedSchedule.h"
#include "core/sim/MemoryFit.h"
#include "core/tune/Tuner.h"
#include "views/ParetoChart.h"
#include "views/TunerCurveChart.h"

using namespace mario;
using namespace mario::gui;

namespace {

// LLaMA-2 13B on 8 A100-80G, global batch 32: a space of a few hundred candidates.
const QString kLlama = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/llama2-13b-1f1b.config.json");
// LLaMA-3 70B on 128 H200, global batch 1024: several seconds of search on one thread,
// while no single candidate takes more than a few tens of milliseconds.
const char* const kLongSearch = R"({"format": "mario-config", "version": 1, "name": "long search",
  "model": "llama3-70b", "hardware": "h200", "devices": 128,
  "parallel": {"scheme": "1f1b", "pp": 8, "dp": 16, "tp": 1, "micro_batch_size": 1, "global_batch_size": 1024}})";
const QString kFigure2 = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/figure2.config.json");

std::vector<std::string> topLabels(const TunerPanel& panel, int count) {
    std::vector<std::string> labels;
    for (int row = 0; row < count && row < panel.proxy()->rowCount(); ++row)
        labels.push_back(panel.result()->outcomes[panel.proxy()->outcomeAt(row)].candidate.label());
    return labels;
}

// The window's tuner on LLaMA-2 13B, on screen (clicks in its table need it there); nullptr when
// the config did not open or the panel was not shown.
TunerPanel* showTunerOnLlama(MainWindow& window) {
    window.document()->setSynchronous(true);
    if (!window.openFile(kLlama)) return nullptr;
    TunerPanel* panel = window.tuner();
    panel->show();
    return QTest::qWaitForWindowExposed(panel) ? panel : nullptr;
}

double highestPeak(const SimResult& result) { return memoryFit(result, std::nullopt).highest_peak_bytes; }

bool waitForRun(TunerPanel& panel, int timeoutMs = 120000) {
    QElapsedTimer clock;
    clock.start();
    while (panel.isRunning() && clock.elapsed() < timeoutMs) QTest::qWait(20);
    return !panel.isRunning();
}

}  // namespace

class TunerTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void runningThePanelGivesTheTunersRanking() {
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(kLlama));
        TunerPanel* panel = window.tuner();
        QVERIFY(panel->canTune());
        QVERIFY(panel->noteText().isEmpty());
        // The inputs come from the config: its devices and its memory limit.
        QCOMPARE(panel->devicesBox()->value(), 8);
        QCOMPARE(panel->memoryBox()->value(), 80.0);
        const TuneOptions options = panel->options();
        QCOMPARE(options.devices, 8);
        QCOMPARE(*options.memory_limit_bytes, 80e9);
        QCOMPARE(options.tensor_parallel, std::vector<int>{1});
        QCOMPARE(options.schemes, allSchemes());  // every scheme is searched unless unticked

        QSignalSpy finished(panel, &TunerPanel::finished);
        QVERIFY(panel->run());
        QVERIFY(panel->isRunning());
        QVERIFY(!panel->runButton()->isEnabled());
        QVERIFY(panel->cancelButton()->isEnabled());
        QVERIFY(waitForRun(*panel));
        QCOMPARE(finished.count(), 1);
        QVERIFY(panel->result().has_value());
        QVERIFY(!panel->result()->cancelled);

        // The same search straight through the core API ranks the same way.
        int lastTotal = 0;
        auto direct = Tuner::run(*window.document()->state().config, options,
                                 [&lastTotal](const TuneProgress& p, const TuneOutcome&) { lastTotal = p.total; });
        QVERIFY(direct.ok());
        QVERIFY(direct->ranking.size() >= 3);
        std::vector<std::string> expected;
        for (int k = 0; k < 3; ++k) expected.push_back(direct->outcomes[direct->ranking[k]].candidate.label());
        QCOMPARE(topLabels(*panel, 3), expected);
        QCOMPARE(panel->proxy()->rowCount(), static_cast<int>(direct->ranking.size()));
        QCOMPARE(panel->model()->data(panel->model()->index(0, TuneResultModel::Status)).toString(),
                 QStringLiteral("best"));

        // The curve ends on the best throughput, after every candidate and every refinement,
        // and counts candidates as the summary does: the best few refined are none more (the
        // curve said 418 where the summary said 410). The progress reports counted the
        // refinements past the candidates: so many were simulated again, and the summary says so.
        const double best = direct->outcomes[*direct->best].samples_per_s;
        const int candidates = static_cast<int>(direct->outcomes.size());
        QVERIFY(panel->curve()->lastPoint().has_value());
        QCOMPARE(panel->curve()->lastPoint()->y(), best);
        QCOMPARE(static_cast<int>(panel->curve()->lastPoint()->x()), candidates);
        QVERIFY(panel->curve()->plot()->xAxis->range().upper < candidates * 1.05);
        QVERIFY(lastTotal > candidates);
        QCOMPARE(direct->refined, lastTotal - candidates);
        QVERIFY2(panel->summaryText().contains(QStringLiteral("%1 candidates evaluated").arg(candidates)),
                 qPrintable(panel->summaryText()));
        QVERIFY2(panel->summaryText().contains(
                     QStringLiteral("the best %1 simulated again with every pass").arg(lastTotal - candidates)),
                 qPrintable(panel->summaryText()));
        QCOMPARE(panel->progressBar()->value(), panel->progressBar()->maximum());
        // Issue 14: the bar said "176/176" beside "168 candidates"; both count candidates now.
        QCOMPARE(panel->progressBar()->maximum(), static_cast<int>(direct->outcomes.size()));
        QCOMPARE(panel->progressBar()->text(), QStringLiteral("%1 / %1 candidates").arg(direct->outcomes.size()));
        QCOMPARE(panel->pareto()->pointCount(), static_cast<int>(direct->ranking.size()));
        QCOMPARE(panel->pareto()->selected(), direct->best);
        QVERIFY2(
            panel->summaryText().contains(QString::fromStdString(direct->outcomes[*direct->best].candidate.label())),
            qPrintable(panel->summaryText()));
        QVERIFY(panel->summaryText().contains(QStringLiteral("simulations/s")));

        // Rejected rows appear on request and, whatever the sort, below every feasible one.
        const int feasibleRows = panel->proxy()->rowCount();
        panel->showRejectedBox()->setChecked(true);
        QVERIFY(panel->proxy()->rowCount() > feasibleRows);
        panel->table()->sortByColumn(TuneResultModel::PeakGB, Qt::AscendingOrder);
        QVERIFY(panel->proxy()->index(0, 0).data(TuneResultModel::FeasibleRole).toBool());
        QVERIFY(!panel->proxy()->index(feasibleRows, 0).data(TuneResultModel::FeasibleRole).toBool());
        const QString reason = panel->proxy()->index(feasibleRows, TuneResultModel::Status).data().toString();
        QVERIFY2(reason.contains(QStringLiteral("over the")), qPrintable(reason));
        panel->table()->sortByColumn(TuneResultModel::SamplesPerS, Qt::DescendingOrder);
        QVERIFY(panel->proxy()->index(0, 0).data(TuneResultModel::FeasibleRole).toBool());
        QCOMPARE(panel->proxy()->outcomeAt(0), *direct->best);

        if (qEnvironmentVariableIsSet("MARIO_TUNER_PREVIEW")) {
            panel->showRejectedBox()->setChecked(false);
            panel->table()->sortByColumn(TuneResultModel::Rank, Qt::AscendingOrder);
            panel->resize(1280, 880);
            panel->show();
            QVERIFY(QTest::qWaitForWindowExposed(panel));
            QTest::qWait(100);
            const QString preview = qEnvironmentVariable("MARIO_TUNER_PREVIEW");
            QVERIFY(panel->grab().save(preview));
            panel->showRejectedBox()->setChecked(true);
            panel->table()->scrollTo(panel->proxy()->index(feasibleRows, 0), QAbstractItemView::PositionAtTop);
            QVERIFY(
                panel->grab().save(QString(preview).replace(QStringLiteral(".png"), QStringLiteral("-rejected.png"))));
        }
    }

    void cancelReturnsPromptlyAndSaysSo() {
        QTemporaryDir dir;
        const QString path = dir.filePath("long.config.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(kLongSearch);
        file.close();
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(path));
        TunerPanel* panel = window.tuner();
        QCOMPARE(panel->devicesBox()->value(), 128);
        panel->threadsBox()->setValue(1);
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(panel->progressBar()->value() > 0, 30000);
        QVERIFY(panel->isRunning());
        if (qEnvironmentVariableIsSet("MARIO_TUNER_PREVIEW")) {
            QTest::qWait(400);  // let the curve grow a little
            panel->resize(1280, 880);
            QVERIFY(panel->grab().save(qEnvironmentVariable("MARIO_TUNER_PREVIEW")
                                           .replace(QStringLiteral(".png"), QStringLiteral("-running.png"))));
        }
        QElapsedTimer clock;
        clock.start();
        panel->cancelButton()->click();
        QVERIFY(waitForRun(*panel, 5000));
        QVERIFY2(clock.elapsed() < 1000, qPrintable(QStringLiteral("cancel took %1 ms").arg(clock.elapsed())));
        QVERIFY(panel->result().has_value());
        QVERIFY(panel->result()->cancelled);
        QVERIFY2(panel->statusText().startsWith(QStringLiteral("Cancelled after")), qPrintable(panel->statusText()));
        QVERIFY(panel->runButton()->isEnabled());
        QVERIFY(!panel->cancelButton()->isEnabled());
    }

    void doubleClickOpensTheCandidatesSchedule() {
        MainWindow window;
        TunerPanel* panel = showTunerOnLlama(window);
        QVERIFY(panel);
        QVERIFY(panel->run());
        QVERIFY(waitForRun(*panel));
        QVERIFY(panel->proxy()->rowCount() > 0);
        const TuneOutcome row = panel->result()->outcomes[panel->proxy()->outcomeAt(0)];
        const TuneCandidate top = row.candidate;

        QTableView* table = panel->table();
        const int undoSteps = window.document()->undoStack()->count();
        const QPoint at = table->visualRect(panel->proxy()->index(0, TuneResultModel::SchemeCol)).center();
        // A widget double-click in QTest is the second click only: the view wants the press first.
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QTRY_COMPARE(window.document()->undoStack()->count(), undoSteps + 1);  // one step: settings and passes
        QVERIFY2(panel->statusText().startsWith(QStringLiteral("Opened")), qPrintable(panel->statusText()));
        const Plan& plan = window.document()->current().plan;
        QCOMPARE(plan.devices.size(), static_cast<std::size_t>(top.pp));
        QCOMPARE(plan.info.scheme, std::string(schemeName(top.scheme)));
        QCOMPARE(window.document()->state().config->parallel.micro_batch_size, top.micro_batch_size);
        QCOMPARE(window.document()->state().config->parallel.dp, top.dp);
        // Exactly the passes the row was measured with, so the window shows the row's numbers.
        QCOMPARE(window.document()->state().passes, row.passes);
        QCOMPARE(row.passes.empty(), !top.checkpoint);
        QCOMPARE(window.document()->current().result.makespan_ms, row.step_ms);
        QCOMPARE(highestPeak(window.document()->current().result), row.peak_bytes);

        // One undo step brings the original schedule back.
        window.document()->undoStack()->undo();
        QCOMPARE(window.document()->state().config->parallel.pp, 8);
        QCOMPARE(window.document()->current().plan.info.scheme, std::string("1f1b"));
        // The results stay: they were searched from the config the panel ran on.
        QVERIFY(panel->proxy()->rowCount() > 0);
    }

    void aCheckpointedRowOpensWithItsOwnStepAndPeak_data() {
        QTest::addColumn<int>("globalBatch");
        QTest::newRow("64 micro-batches") << 64;
        // 1024: prepose and hide stop at the tuner's 48 simulations a run (uncapped they took 415
        // and 4227 on 2026-11-26's costs; since the cross-entropy's kernels were counted, 2026-11-28,
        // the uncapped schedule equals the capped one, yet the caps still cut the work).
        QTest::newRow("1024 micro-batches, passes capped") << 1024;
    }

    void aCheckpointedRowOpensWithItsOwnStepAndPeak() {
        // GPT-3 13B on 32 A100-40G with materialised attention: memory is tight, every top row
        // checkpoints, and the refined ones were measured with bound-w and hide as well. The
        // window must show each such row's step and peak, not the paper's four passes' (issue 31:
        // 4.269 s and 5 devices over the limit for a row ranked at 4.445 s, 40.0 GB), and must run
        // the passes with the tuner's effort caps.
        QFETCH(int, globalBatch);
        QTemporaryDir dir;
        QFile example(QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/gpt3-13b-chimera.config.json")),
            config(dir.filePath("gpt3.config.json"));
        QVERIFY(example.open(QIODevice::ReadOnly) && config.open(QIODevice::WriteOnly));
        QJsonObject json = QJsonDocument::fromJson(example.readAll()).object(), parallel = json["parallel"].toObject();
        parallel["global_batch_size"] = globalBatch;
        json["parallel"] = parallel;
        QVERIFY(config.write(QJsonDocument(json).toJson()) > 0 && config.flush());
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(config.fileName()));
        QCOMPARE(window.document()->state().effort, PassEffort{});  // a file: the pass manager's own budgets
        TunerPanel* panel = window.tuner();
        panel->show();
        QVERIFY(QTest::qWaitForWindowExposed(panel) && panel->run() && waitForRun(*panel));
        QVERIFY(panel->proxy()->rowCount() > 0);
        const TuneOutcome row = panel->result()->outcomes[panel->proxy()->outcomeAt(0)];
        QVERIFY2(row.candidate.checkpoint, row.candidate.label().c_str());
        QVERIFY(std::find(row.passes.begin(), row.passes.end(), PassId::Hide) != row.passes.end());
        QTableView* table = panel->table();
        const QPoint at = table->visualRect(panel->proxy()->index(0, TuneResultModel::SchemeCol)).center();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QTRY_COMPARE(window.document()->state().passes, row.passes);
        QVERIFY2(panel->statusText().contains(QStringLiteral("hide")), qPrintable(panel->statusText()));
        QCOMPARE(window.document()->state().effort, Tuner::passEffort(panel->options()));
        const SimResult& shown = window.document()->current().result;
        QCOMPARE(shown.makespan_ms, row.step_ms);
        QCOMPARE(highestPeak(shown), row.peak_bytes);
        QVERIFY(highestPeak(shown) <= 40e9);
        if (globalBatch == 1024) {  // the case covers the caps: uncapped, a pass runs past them
            ScheduleInput uncapped = window.document()->state();
            uncapped.effort = {};
            const auto other = prepareSchedule(uncapped);
            QVERIFY(other.ok());
            // The caps cut the passes' work: uncapped, prepose-forward and hide simulate more
            // than the window's run under the tuner's caps (their schedules may still agree).
            const auto simulations = [](const std::vector<PassReport>& steps) {
                int total = 0;
                for (const PassReport& step : steps)
                    if (step.pass == PassId::Prepose || step.pass == PassId::Hide) total += step.simulations;
                return total;
            };
            const int capped = simulations(window.document()->current().steps);
            const int free = simulations(other->steps);
            QVERIFY2(free > capped, qPrintable(QStringLiteral("uncapped %1 simulations, capped %2: the passes no longer "
                                                              "reach the tuner's caps here: pick a larger case")
                                                   .arg(free)
                                                   .arg(capped)));
        }
    }

    void exportWritesTheSelectedCandidatesBundle() {
        MainWindow window;
        TunerPanel* panel = showTunerOnLlama(window);
        QVERIFY(panel);
        QVERIFY(!panel->exportButton()->isEnabled());  // nothing tuned yet
        QVERIFY(panel->run());
        QVERIFY(waitForRun(*panel));
        // The best row is selected after a run, and it fits: Export is offered.
        QTRY_VERIFY(panel->exportButton()->isEnabled());
        const int best = panel->proxy()->outcomeAt(0);
        const TuneCandidate top = panel->result()->outcomes[best].candidate;

        QTemporaryDir dir;
        QVERIFY(panel->exportCandidate(best, dir.path()));
        QVERIFY2(panel->statusText().startsWith(QStringLiteral("Exported")), qPrintable(panel->statusText()));
        // The plan is the candidate's: its pipeline devices and scheme.
        auto plan = readPlanFile(dir.filePath("plan.mario.json").toStdString());
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().message.c_str());
        QCOMPARE(plan->devices.size(), static_cast<std::size_t>(top.pp));
        QCOMPARE(plan->info.scheme, std::string(schemeName(top.scheme)));
        // The scripts run its world on nodes of the hardware's size (a100-80g: 8 GPUs a node).
        QFile torchrun(dir.filePath("launch_torchrun.sh"));
        QVERIFY(torchrun.open(QIODevice::ReadOnly));
        const QString script = QString::fromUtf8(torchrun.readAll());
        const QString world = QStringLiteral("# World size %1 = pp %2 x dp %3 x tp %4")
                                  .arg(top.pp * top.dp * top.tp)
                                  .arg(top.pp)
                                  .arg(top.dp)
                                  .arg(top.tp);
        QVERIFY2(script.contains(world), qPrintable(script.left(600)));
        QVERIFY2(script.contains(QStringLiteral("(nodes of 8 GPUs)")), qPrintable(script.left(600)));
        QVERIFY(QFileInfo(dir.filePath("megatron_args.txt")).size() > 0);
        QVERIFY(QFileInfo(dir.filePath("launch_slurm.sh")).isExecutable());

        // A candidate that does not fit is refused by name, and Export is not offered for it.
        int rejected = -1;
        for (int i = 0; i < static_cast<int>(panel->result()->outcomes.size()) && rejected < 0; ++i)
            if (!panel->result()->outcomes[i].feasible) rejected = i;
        QVERIFY(rejected >= 0);  // 8 A100-80G cannot hold every layout of LLaMA-2 13B
        QTemporaryDir other;
        QVERIFY(!panel->exportCandidate(rejected, other.path()));
        QVERIFY2(panel->statusText().contains(QStringLiteral("does not fit")), qPrintable(panel->statusText()));
        QVERIFY(!QFileInfo::exists(other.filePath("plan.mario.json")));
        panel->showRejectedBox()->setChecked(true);
        const int row = panel->model()->rowOf(rejected);
        QVERIFY(row >= 0);
        panel->table()->setCurrentIndex(panel->proxy()->mapFromSource(panel->model()->index(row, 0)));
        QVERIFY(!panel->exportButton()->isEnabled());
    }

    void aPlanFileDisablesThePanelWithANote() {
        QTemporaryDir dir;
        const QString planPath = dir.filePath("llama.mario.json");
        {
            MainWindow window;
            window.document()->setSynchronous(true);
            QVERIFY(window.openFile(kLlama));
            QString error;
            QVERIFY2(window.document()->saveAs(planPath, &error), qPrintable(error));
        }
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(kLlama));
        TunerPanel* panel = window.tuner();
        QVERIFY(panel->runButton()->isEnabled());
        QVERIFY(window.openFile(planPath));  // the open panel follows the document
        QVERIFY(!panel->canTune());
        QVERIFY(!panel->runButton()->isEnabled());
        QVERIFY2(panel->noteText().contains(QStringLiteral("plan file")), qPrintable(panel->noteText()));
        QVERIFY(!panel->run());

        // Teaching (unit) costs are refused too, for their own reason.
        QVERIFY(window.openFile(kFigure2));
        QVERIFY(!panel->runButton()->isEnabled());
        QVERIFY(panel->noteText().contains(QStringLiteral("unit")));
        QVERIFY(window.openFile(kLlama));
        QVERIFY(panel->runButton()->isEnabled());
        QVERIFY(panel->noteText().isEmpty());
    }

    void aLimitNothingFitsSaysWhy() {
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(kLlama));
        TunerPanel* panel = window.tuner();
        panel->memoryBox()->setValue(10);  // LLaMA-2 13B's weights alone need more on 8 GPUs
        QVERIFY(panel->run());
        QVERIFY(waitForRun(*panel));
        QVERIFY(panel->result().has_value());
        QVERIFY(!panel->result()->best);
        QCOMPARE(panel->proxy()->rowCount(), 0);
        QCOMPARE(panel->pareto()->pointCount(), 0);
        QVERIFY2(panel->summaryText().startsWith(QStringLiteral("Nothing fits")), qPrintable(panel->summaryText()));
        QVERIFY(panel->summaryText().contains(QStringLiteral("10.0 GB")));
        QCOMPARE(panel->curve()->lastPoint()->y(), 0.0);
    }

    void theMenuShowsTheTuner() {
        MainWindow window;
        QAction* tune = nullptr;
        for (QAction* action : window.findChildren<QAction*>())
            if (action->shortcut() == QKeySequence(QStringLiteral("Ctrl+T"))) tune = action;
        QVERIFY(tune);
        tune->trigger();
        QVERIFY(window.tuner()->isVisible());
        QVERIFY(window.tuner()->isWindow());
    }
};

QTEST_MAIN(TunerTest)
#include "tuner_test.moc"
