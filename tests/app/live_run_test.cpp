// Live profiling (executor issue; issue 14, item 6): LiveRun and LiveRunWindow against the real
// mario-executor (CPU backend, tiny model), N iterations with a warm-up, the heat map and the
// per-device deviation from events built by hand, and the executor's capabilities behind
// "Run on one GPU". Offscreen.
#include <QAction>
#include <QElapsedTimer>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app/gui/ExecutorProbe.h"
#include "app/gui/InstructionHeatMap.h"
#include "app/gui/LiveRun.h"
#include "app/gui/LiveRunTables.h"
#include "app/gui/LiveRunWindow.h"
#include "core/io/PlanJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassManager.h"
#include "core/session/InputFile.h"
#include "core/sim/Simulator.h"
#include "tests/common/ProgramLookup.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::gui;

class LiveRunTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString planPath_;
    Plan plan_;
    SimResult sim_;

    int computeCount() const {
        int n = 0;
        for (const auto& device : plan_.devices)
            for (const auto& ins : device.program) n += isCompute(ins.op) ? 1 : 0;
        return n;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        auto presets = PresetLibrary::locate();
        QVERIFY2(presets.ok(), presets ? "" : presets.error().message.c_str());
        auto input = loadInputFile(MARIO_TEST_SOURCE_DIR "/resources/examples/figure2.config.json", *presets);
        QVERIFY2(input.ok(), input ? "" : input.error().message.c_str());
        plan_ = std::move(input->plan);
        auto passes = runPasses(plan_, input->file_passes);
        QVERIFY(passes.ok());
        auto result = Simulator::run(plan_);
        QVERIFY(result.ok());
        sim_ = *result;
        planPath_ = dir_.filePath("figure2.mario.json");
        QVERIFY(writePlanFile(plan_, planPath_.toStdString()).ok());
    }

    void measuresEveryComputeInstruction() {
        LiveRunWindow window;
        window.setPlan(plan_, sim_);
        QSignalSpy finished(window.run(), &LiveRun::finished);
        QSignalSpy failed(window.run(), &LiveRun::failed);
        QSignalSpy iterations(window.run(), &LiveRun::iterationFinished);
        QSignalSpy instructions(window.run(), &LiveRun::instructionFinished);
        window.show();
        QVERIFY(window.start(planPath_, MARIO_EXECUTOR_BIN));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QCOMPARE(window.measuredCount(), computeCount());
        QCOMPARE(static_cast<int>(window.measuredTimeline().boxCount()), computeCount());
        QCOMPARE(static_cast<int>(window.measuredView()->timeline().boxCount()), computeCount());
        QCOMPARE(static_cast<std::size_t>(instructions.count()),
                 LiveRunWindow::kDefaultIterations * plan_.instructionCount());
        // Five iterations by default, counted from 0 by the executor; the first is the warm-up.
        QCOMPARE(iterations.count(), LiveRunWindow::kDefaultIterations);
        for (int i = 0; i < iterations.count(); ++i) QCOMPARE(iterations.at(i).at(2).toInt(), i);
        QVERIFY(iterations.first().first().toDouble() > 0);
        QCOMPARE(window.shownIteration(), LiveRunWindow::kDefaultIterations - 1);
        QTableWidget* table = window.tables()->iterations();
        QCOMPARE(table->rowCount(), LiveRunWindow::kDefaultIterations);
        QCOMPARE(table->item(0, LiveRunTables::Iteration)->text(), QStringLiteral("1 (warm-up)"));
        QCOMPARE(table->item(1, LiveRunTables::Iteration)->text(), QStringLiteral("2"));
        QVERIFY2(window.deviationText().contains("median of iterations 2–5"), qPrintable(window.deviationText()));
        // Every compute instruction has a ratio in the heat map.
        for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d)
            for (int i = 0; i < static_cast<int>(plan_.devices[d].program.size()); ++i)
                if (isCompute(plan_.devices[d].program[i].op) &&
                    sim_.devices[d].timings[i].end > sim_.devices[d].timings[i].start)
                    QVERIFY(window.measurements().ratio(d, i).has_value());
        QVERIFY(window.stepMs() > 0);
        QVERIFY(!window.deviationText().isEmpty());
        QVERIFY2(window.deviationText().contains("total deviation"), qPrintable(window.deviationText()));
        QVERIFY2(window.deviationText().contains("per-instruction"), qPrintable(window.deviationText()));
        QVERIFY(window.run()->summary().contains("loss"));
        window.resize(1450, 950);
        window.grab().save("/tmp/live_run.png");
        qInfo("deviation: %s", qPrintable(window.deviationText()));
        qInfo("status: %s", qPrintable(window.statusText()));
    }

    void stopEndsALongRunQuickly() {
        LiveRun run;
        QSignalSpy finished(&run, &LiveRun::finished);
        QSignalSpy failed(&run, &LiveRun::failed);
        QSignalSpy iterations(&run, &LiveRun::iterationFinished);
        QVERIFY(run.start(planPath_, MARIO_EXECUTOR_BIN, "tiny", {"--iterations", "100000"}));
        QTRY_VERIFY_WITH_TIMEOUT(iterations.count() >= 1, 30000);
        QVERIFY(run.isRunning());
        QElapsedTimer timer;
        timer.start();
        run.stop();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 3000);
        QVERIFY(timer.elapsed() < 3000);
        QVERIFY(!run.isRunning());
        QVERIFY(failed.isEmpty());  // a requested stop is no failure
    }

    void missingExecutableFailsWithOneLine() {
        LiveRun run;
        QSignalSpy finished(&run, &LiveRun::finished);
        QSignalSpy failed(&run, &LiveRun::failed);
        QVERIFY(run.start(planPath_, dir_.filePath("no-such-mario-executor")));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
        const QString message = failed.first().first().toString();
        QVERIFY(!message.isEmpty());
        QVERIFY(!message.contains('\n'));
        QVERIFY2(message.contains("no-such-mario-executor"), qPrintable(message));
    }

    void aMeasuredProfileRunsTheModelItWasMeasuredOn() {
        // A profile records the executor model it was measured on; the live run of a schedule
        // costed with it must run that model, not the default one.
        const QString spec = QStringLiteral("layers=4,hidden=16,heads=2,seq=8,vocab=32");
        const QString profile = dir_.filePath("small.profile.json");
        {
            QFile file(profile);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QStringLiteral(R"({"format": "mario-profile", "model": "%1"})").arg(spec).toUtf8());
        }
        QCOMPARE(LiveRun::modelSpecFor(profile.toStdString()), spec);
        QCOMPARE(LiveRun::modelSpecFor(std::nullopt), QStringLiteral("tiny"));
        QCOMPARE(LiveRun::modelSpecFor(dir_.filePath("missing.profile.json").toStdString()), QStringLiteral("tiny"));

        LiveRun run;
        QSignalSpy finished(&run, &LiveRun::finished);
        QSignalSpy failed(&run, &LiveRun::failed);
        QVERIFY(run.start(planPath_, MARIO_EXECUTOR_BIN, LiveRun::modelSpecFor(profile.toStdString())));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QCOMPARE(run.hello().value("model").toString(), spec);  // the executor names its model
        QVERIFY(run.summary().contains("loss"));
    }

    void gpuRunMeasuresOrSaysWhyNotInOneLine() {
        // Tools → Run on one GPU. Where LibTorch has no CUDA (Debian's build, CI) the executor's
        // one line reaches the window; on a CUDA machine the run measures every instruction.
        LiveRunWindow window;
        window.setPlan(plan_, sim_);
        QSignalSpy finished(window.run(), &LiveRun::finished);
        QSignalSpy failed(window.run(), &LiveRun::failed);
        QVERIFY(window.start(planPath_, MARIO_EXECUTOR_BIN, "tiny", {"--backend", "cuda"}));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        if (!failed.isEmpty()) {
            const QString message = failed.first().first().toString();
            QVERIFY(!message.contains('\n'));
            QVERIFY2(message.contains("CUDA") || message.contains("GPU"), qPrintable(message));
            QVERIFY2(window.statusText().contains(message.left(20)), qPrintable(window.statusText()));
        } else {
            QCOMPARE(window.measuredCount(), computeCount());
        }
    }

    void badPlanFailsWithTheExecutorsLine() {
        const QString bad = dir_.filePath("bad.mario.json");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"format\": \"mario-plan\"}");
        file.close();
        LiveRun run;
        QSignalSpy finished(&run, &LiveRun::finished);
        QSignalSpy failed(&run, &LiveRun::failed);
        QVERIFY(run.start(bad, MARIO_EXECUTOR_BIN));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QCOMPARE(failed.count(), 1);
        const QString message = failed.first().first().toString();
        QVERIFY(!message.contains('\n'));
        QVERIFY2(message.contains("version"), qPrintable(message));  // the executor's own words
        qInfo("bad plan: %s", qPrintable(failed.first().first().toString()));
    }
    // The heat map and the per-device deviation from events built by hand: 0F0 on device 0
    // takes 10× its simulated time in the warm-up, then 1.2×, 1.5× and 1.1×. The median after
    // the warm-up is 1.2×; its box is coloured 0.263 (log2 1.2) of the way from the scale's
    // white F7F7F7 to its red B2182B: (229, 188, 193). Device 0's deviation is
    // (d − 1.2d) / 1.2d = −16.7%.
    void heatMapFromHandBuiltEvents() {
        LiveRunWindow window;
        window.setPlan(plan_, sim_);
        window.resize(1450, 950);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const int index = test::indexOf(plan_, 0, "0F0");
        QVERIFY(index >= 0);
        const auto& t = sim_.devices[0].timings[static_cast<std::size_t>(index)];
        const double d = t.end - t.start;
        QVERIFY(d > 0);
        const double factors[] = {10, 1.2, 1.5, 1.1};
        double clock = 0;
        for (int it = 0; it < 4; ++it) {
            emit window.run()->instructionFinished(0, index, clock, clock + factors[it] * d, it);
            emit window.run()->iterationFinished(100 + it, 1.0, it);
            clock += 100;
        }
        QTRY_VERIFY(window.tables()->devices()->rowCount() == static_cast<int>(plan_.devices.size()));
        QVERIFY(window.measurements().ratio(0, index).has_value());
        QCOMPARE(*window.measurements().ratio(0, index), 1.2);
        QTRY_COMPARE(window.tables()->devices()->item(0, LiveRunTables::Deviation)->text(), QStringLiteral("-16.7%"));
        QCOMPARE(window.tables()->devices()->item(1, LiveRunTables::Deviation)->text(), QStringLiteral("—"));
        // The median step after the warm-up: 101, 102, 103 → 102.
        QCOMPARE(window.stepMs(), 102.0);

        InstructionHeatMap* heat = window.heatMap();
        const QRectF box = heat->boxRect(0, index);
        QVERIFY(!box.isEmpty());
        const QImage image = heat->grab().toImage();
        const QColor pixel = image.pixelColor((box.topLeft() + QPointF(3, 3)).toPoint());
        QVERIFY2(std::abs(pixel.red() - 229) <= 2 && std::abs(pixel.green() - 188) <= 2 &&
                     std::abs(pixel.blue() - 193) <= 2,
                 qPrintable(pixel.name()));
        // An instruction never measured stays grey, and the tooltip gives the numbers.
        const int other = test::indexOf(plan_, 1, "1F0");
        const QColor grey = image.pixelColor((heat->boxRect(1, other).topLeft() + QPointF(3, 3)).toPoint());
        QCOMPARE(grey, QColor(0xD0, 0xD0, 0xD0));
        const QString tip = heat->tooltipFor(0, index);
        QVERIFY2(tip.contains("median of 3 iterations") && tip.contains("×1.20"), qPrintable(tip));
        QVERIFY2(heat->legendText().contains("iterations 2–4"), qPrintable(heat->legendText()));
        window.grab().save("/tmp/live_run_handmade.png");
    }

    // The user sets 2 iterations with the keyboard and clicks Run again.
    void runAgainWithTheIterationsTyped() {
        LiveRunWindow window;
        window.setPlan(plan_, sim_);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy finished(window.run(), &LiveRun::finished);
        QVERIFY(window.start(planPath_, MARIO_EXECUTOR_BIN));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY(window.runAgainButton()->isEnabled());
        QSpinBox* box = window.iterationsBox();
        box->setFocus();
        QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(box, "2");
        QCOMPARE(box->value(), 2);
        QTest::mouseClick(window.runAgainButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
        QCOMPARE(static_cast<int>(window.measurements().iterations().size()), 2);
        QCOMPARE(window.tables()->iterations()->rowCount(), 2);
        QVERIFY2(window.deviationText().contains("iteration 2"), qPrintable(window.deviationText()));
    }

    // The executor says what it can run; the window's GPU entry follows it.
    void gpuActionFollowsTheExecutorsCapabilities() {
        ExecutorProbe probe;
        QSignalSpy answered(&probe, &ExecutorProbe::answered);
        QMenu menu;
        QAction* gpu = menu.addAction("Run on one GPU");
        describeGpuAction(gpu, probe);
        QVERIFY(!gpu->isEnabled());  // not asked yet
        probe.ask(MARIO_EXECUTOR_BIN);
        QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 1, 30000);
        QCOMPARE(probe.state(), ExecutorProbe::State::Answered);
        const auto& caps = *probe.capabilities();
        describeGpuAction(gpu, probe);
        QVERIFY(menu.toolTipsVisible());
        QCOMPARE(gpu->isEnabled(), caps.cuda);
        if (!caps.cuda) {  // Debian's LibTorch, CI
            QVERIFY2(gpu->toolTip().contains("LibTorch has no CUDA"), qPrintable(gpu->toolTip()));
            QVERIFY(!caps.partition_sms);
        }
        QCOMPARE(gpuRunArguments(probe).mid(0, 3), (QStringList{"--backend", "cuda", "--partition-sms"}));

        // A missing executor: disabled, saying so.
        ExecutorProbe missing;
        QSignalSpy missingAnswered(&missing, &ExecutorProbe::answered);
        missing.ask(dir_.filePath("no-such-mario-executor"));
        QTRY_COMPARE_WITH_TIMEOUT(missingAnswered.count(), 1, 5000);
        QCOMPARE(missing.state(), ExecutorProbe::State::Failed);
        describeGpuAction(gpu, missing);
        QVERIFY(!gpu->isEnabled());
        QVERIFY2(gpu->toolTip().contains("not found"), qPrintable(gpu->toolTip()));
    }

    // An executor with CUDA but without SM partitions (written by hand as a script): the entry
    // is enabled, and the run shares the SMs instead of failing.
    void aGpuWithoutPartitionsRunsOnSharedStreams() {
        const QString fake = dir_.filePath("fake-executor");
        QFile file(fake);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            "#!/bin/sh\necho 'warning: something LibTorch says first'\n"
            "echo '{\"cuda\": true, \"devices\": 1, \"partition_sms\": false, \"nccl\": false, \"version\": \"x\", "
            "\"partition_reason\": \"the CUDA driver here (12.2) cannot partition SMs\"}'\n");
        file.close();
        file.setPermissions(file.permissions() | QFileDevice::ExeOwner);
        ExecutorProbe probe;
        QSignalSpy answered(&probe, &ExecutorProbe::answered);
        probe.ask(fake);
        QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 1, 10000);
        QCOMPARE(probe.state(), ExecutorProbe::State::Answered);
        QAction gpu(nullptr);
        describeGpuAction(&gpu, probe);
        QVERIFY(gpu.isEnabled());
        QVERIFY2(gpu.toolTip().contains("cannot partition SMs"), qPrintable(gpu.toolTip()));
        QCOMPARE(gpuRunArguments(probe), (QStringList{"--backend", "cuda", "--partition-sms", "--shared-streams"}));
    }
};

QTEST_MAIN(LiveRunTest)
#include "live_run_test.moc"
