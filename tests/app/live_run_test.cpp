// Live profiling (executor issue): LiveRun and LiveRunWindow against the real mario-executor
// (CPU backend, tiny model), offscreen.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app/gui/LiveRun.h"
#include "app/gui/LiveRunWindow.h"
#include "core/io/InputFile.h"
#include "core/io/PlanJson.h"
#include "core/model/PresetLibrary.h"
#include "core/passes/PassManager.h"
#include "core/sim/Simulator.h"
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
        QCOMPARE(static_cast<std::size_t>(instructions.count()), plan_.instructionCount());
        QCOMPARE(iterations.count(), 1);
        QVERIFY(iterations.first().first().toDouble() > 0);
        QVERIFY(window.stepMs() > 0);
        QVERIFY(!window.deviationText().isEmpty());
        QVERIFY2(window.deviationText().contains("total deviation"), qPrintable(window.deviationText()));
        QVERIFY2(window.deviationText().contains("per-instruction"), qPrintable(window.deviationText()));
        QVERIFY(window.run()->summary().contains("loss"));
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
};

QTEST_MAIN(LiveRunTest)
#include "live_run_test.moc"
