// The session survives (issue 10): the autosave holds the whole document and is written
// atomically into a file of the session's own; a crashed session is offered back; files are
// opened on a worker thread, and a cancelled or failed open changes nothing.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtTest>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "app/gui/AutosaveFile.h"
#include "app/gui/ComputationProgress.h"
#include "app/gui/MainWindow.h"
#include "app/gui/SessionAutosave.h"
#include "core/io/ConfigJson.h"
#include "core/session/PlanEdit.h"
#include "tests/common/ProgramLookup.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kFigure2 = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/figure2.config.json");
const QString kLlama = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/llama2-13b-1f1b.config.json");

using mario::test::indexOf;

// Figure 2 with overlap + prepose on and one hand edit on top (F3 of device 1 moved).
bool editedFigure2(ScheduleDocument& document) {
    QString error;
    if (!document.open(kFigure2, &error)) return false;
    document.setPasses({PassId::Overlap, PassId::Prepose}, "two passes");
    const Plan& plan = document.current().plan;
    QString reason;
    return document.requestMove(1, indexOf(plan, 1, "1F3"), 5.0, &reason) && document.state().edits.size() == 1;
}

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class SessionTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void autosaveRoundTripsTheWholeDocument() {
        ScheduleDocument document;
        document.setSynchronous(true);
        QVERIFY(editedFigure2(document));
        const ScheduleInput& state = document.state();
        QString error;
        const auto back =
            AutosaveFile::parse(AutosaveFile::serialize(state, kFigure2), "x", document.presets(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->originalPath, kFigure2);
        QVERIFY(back->state.config);
        QCOMPARE(writeConfig(*back->state.config), writeConfig(*state.config));
        QCOMPARE(back->state.source.devices.size(), std::size_t(4));
        for (std::size_t d = 0; d < 4; ++d)
            QCOMPARE(back->state.source.devices[d].program, state.source.devices[d].program);
        QCOMPARE(back->state.passes, (std::vector<PassId>{PassId::Overlap, PassId::Prepose}));
        QCOMPARE(back->state.edits.size(), std::size_t(1));
        QCOMPARE(back->state.edits[0].device, 1);
        QCOMPARE(toActionString(back->state.edits[0].moved), std::string("1F3"));
        QCOMPARE(back->state.edits[0].before.has_value(), state.edits[0].before.has_value());
        if (state.edits[0].before) QCOMPARE(*back->state.edits[0].before, *state.edits[0].before);
        // A damaged edit is an error naming its JSON path, not a crash in the simulator.
        QJsonObject root = QJsonDocument::fromJson(AutosaveFile::serialize(state, kFigure2)).object();
        QJsonArray edits = root["edits"].toArray();
        QJsonObject edit = edits[0].toObject();
        edit["device"] = 99;
        edits[0] = edit;
        root["edits"] = edits;
        const QByteArray damaged = QJsonDocument(root).toJson();
        QVERIFY(!AutosaveFile::parse(damaged, "a.json", document.presets(), &error));
        QVERIFY2(error.startsWith("a.json: edits[0].device: expected an integer in [0, 3] (got 99)"),
                 qPrintable(error));
    }

    void aKillMidWriteLeavesThePreviousAutosave() {
        QTemporaryDir dir;
        const QString path = dir.filePath("s.mario-autosave.json");
        QString error;
        const QByteArray previous = "{\"previous\": true}\n";
        QVERIFY(AutosaveFile::writeAtomically(path, previous, &error));
        const QByteArray next(3 << 20, 'x');  // three chunks
        const pid_t child = fork();
        if (child == 0) {
            // The child is killed for real after its first chunk, before the rename.
            AutosaveFile::writeAtomically(path, next, &error, [](qint64) { ::kill(::getpid(), SIGKILL); });
            ::_exit(0);
        }
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        QCOMPARE(readAll(path), previous);
    }

    void aFailedAutosaveWriteIsReportedInTheStatusBar() {
        QTemporaryDir dir;
        MainWindow window;
        window.document()->setSynchronous(true);
        window.document()->enableAutosave(dir.filePath("autosave"));
        QVERIFY(window.openFile(kFigure2));
        window.document()->autosave()->waitForPendingWrite();
        const QString path = window.document()->autosave()->path();
        const QByteArray good = readAll(path);
        QVERIFY(good.contains("mario-autosave"));
        // The folder becomes a file: no temporary file can be made beside the autosave
        // (root ignores read-only folders, so that cannot simulate it here).
        QVERIFY(QDir(dir.filePath("autosave")).removeRecursively());
        QFile blocker(dir.filePath("autosave"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QSignalSpy failed(window.document()->autosave(), &SessionAutosave::writeFailed);
        window.document()->setPasses({PassId::Checkpoint}, "one pass");
        window.document()->autosave()->waitForPendingWrite();
        QTRY_COMPARE(failed.count(), 1);
        QTRY_VERIFY2(window.statusBar()->currentMessage().startsWith("Autosave failed: " + path),
                     qPrintable(window.statusBar()->currentMessage()));
    }

    void twoDocumentsKeepTheirOwnAutosaves() {
        QTemporaryDir dir;
        ScheduleDocument first, second;
        for (ScheduleDocument* document : {&first, &second}) {
            document->setSynchronous(true);
            document->enableAutosave(dir.path());
        }
        QString error;
        QVERIFY(first.open(kFigure2, &error));
        QVERIFY(second.open(kLlama, &error));
        first.autosave()->waitForPendingWrite();
        second.autosave()->waitForPendingWrite();
        QVERIFY(first.autosave()->path() != second.autosave()->path());
        QCOMPARE(QDir(dir.path()).entryList({"*.mario-autosave.json"}).size(), 2);
        const auto a = AutosaveFile::parse(readAll(first.autosave()->path()), "a", first.presets(), &error);
        const auto b = AutosaveFile::parse(readAll(second.autosave()->path()), "b", first.presets(), &error);
        QVERIFY(a && b);
        QCOMPARE(a->state.source.devices.size(), std::size_t(4));
        QCOMPARE(b->state.source.devices.size(), std::size_t(8));
        // Both sessions are alive: neither is offered as a crashed one.
        QVERIFY(SessionAutosave::orphans(dir.path()).isEmpty());
        // A clean exit removes only its own file.
        first.discardAutosave();
        QVERIFY(!QFile::exists(first.autosave()->path()));
        QVERIFY(QFile::exists(second.autosave()->path()));
    }

    void aCrashedSessionIsOfferedAndRestored() {
        QTemporaryDir dir;
        const QString orphan = dir.filePath("session-1-dead" + QString(AutosaveFile::kSuffix));
        ScheduleInput saved;
        {
            ScheduleDocument crashed;
            crashed.setSynchronous(true);
            QVERIFY(editedFigure2(crashed));
            saved = crashed.state();
            QString error;
            QVERIFY(AutosaveFile::writeAtomically(orphan, AutosaveFile::serialize(saved, "/home/me/fig2.config.json"),
                                                  &error));
        }
        // A live session's file (lock held) is not offered; the crashed one (no lock) is.
        QLockFile live(SessionAutosave::lockPathOf(dir.filePath("session-2-live" + QString(AutosaveFile::kSuffix))));
        QVERIFY(live.tryLock(0));
        QFile liveFile(dir.filePath("session-2-live" + QString(AutosaveFile::kSuffix)));
        QVERIFY(liveFile.open(QIODevice::WriteOnly));
        liveFile.close();
        QCOMPARE(SessionAutosave::orphans(dir.path()), QStringList{orphan});

        MainWindow window;
        window.document()->setSynchronous(true);
        window.document()->enableAutosave(dir.path());
        QVERIFY(window.openFile(kLlama));  // the file it was asked to open
        QStringList asked;
        QVERIFY(window.offerRestore(dir.path(), [&](const QString& path) {
            asked << path;
            return RestoreChoice::Restore;
        }));
        QCOMPARE(asked, QStringList{orphan});
        const ScheduleInput& state = window.document()->state();
        QCOMPARE(window.document()->path(), QStringLiteral("/home/me/fig2.config.json"));
        QVERIFY(state.config);
        QCOMPARE(state.passes, saved.passes);
        QCOMPARE(state.edits.size(), std::size_t(1));
        QCOMPARE(state.edits[0].moved, saved.edits[0].moved);
        QCOMPARE(window.document()->current().plan.devices.size(), std::size_t(4));
        // Once this session has autosaved the restored work, the crashed file goes.
        window.document()->autosave()->waitForPendingWrite();
        QTRY_VERIFY(!QFile::exists(orphan));
        QVERIFY(SessionAutosave::orphans(dir.path()).isEmpty());
    }

    void theRealOfferKeepsOnLaterAndDeletesOnDiscard() {
        QTemporaryDir dir;
        const QString orphan = dir.filePath("session-1-dead" + QString(AutosaveFile::kSuffix));
        ScheduleDocument crashed;
        crashed.setSynchronous(true);
        QString error;
        QVERIFY(crashed.open(kFigure2, &error));
        QVERIFY(AutosaveFile::writeAtomically(orphan, AutosaveFile::serialize(crashed.state(), kFigure2), &error));
        MainWindow window;
        window.document()->setSynchronous(true);
        for (const char* button : {"later", "discard"}) {
            QString text;
            QTimer::singleShot(0, [&] {
                auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
                if (!box) return;
                text = box->text();
                box->findChild<QPushButton*>(button)->click();
            });
            QVERIFY(!window.offerRestore(dir.path()));  // the message box is modal: exec() runs the timer
            QVERIFY2(text.contains("figure2.config.json"), qPrintable(text));
            QCOMPARE(QFile::exists(orphan), QByteArray(button) == "later");
        }
    }

    void screenshotRunsNeitherWriteNorTouchAutosaves() {
        QTemporaryDir home;
        const QString folder = home.filePath("data/Mario Workbench/mario-workbench/autosave");
        QVERIFY(QDir().mkpath(folder));
        const QString orphan = folder + "/session-1-dead" + AutosaveFile::kSuffix;
        QString error;
        QVERIFY(AutosaveFile::writeAtomically(orphan, "{\"keep\": 1}", &error));
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", home.filePath("data"));
        process.setProcessEnvironment(env);
        process.start(QStringLiteral(MARIO_WORKBENCH_BIN), {kFigure2, "--screenshot", home.filePath("shot.png")});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 0);
        QCOMPARE(readAll(orphan), QByteArray("{\"keep\": 1}"));
        QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList{QFileInfo(orphan).fileName()});
    }

    void openingOffTheGuiThreadCanBeCancelledAndFailuresChangeNothing() {
        MainWindow window;  // asynchronous, as in the real window
        QVERIFY(window.openFile(kFigure2));
        QVERIFY(window.document()->isOpening());  // returned before the file was read
        QVERIFY(!window.progress()->isHidden());
        QTRY_VERIFY(window.document()->hasSchedule());
        QVERIFY(window.progress()->isHidden());
        const Plan shown = window.document()->current().plan;

        // Cancel: the worker's result, when it comes, is dropped.
        QVERIFY(window.openFile(kLlama));
        window.progress()->cancelButton()->click();
        QVERIFY(!window.document()->isOpening());
        QThreadPool::globalInstance()->waitForDone();
        QTest::qWait(50);  // deliver the finished worker's queued result
        QCOMPARE(window.document()->path(), kFigure2);
        QCOMPARE(window.document()->current().plan.devices.size(), shown.devices.size());
        QVERIFY(window.errorText().isEmpty());

        // A failed open: one error line, the session unchanged.
        QTemporaryDir dir;
        QFile bad(dir.filePath("bad.mario.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"format\": \"mario-plan\", \"version\": 1, \"stages\": [");
        bad.close();
        QVERIFY(window.openFile(bad.fileName()));
        QTRY_VERIFY(!window.errorText().isEmpty());
        QVERIFY2(window.errorText().contains("malformed JSON"), qPrintable(window.errorText()));
        QCOMPARE(window.document()->path(), kFigure2);
        QCOMPARE(window.document()->current().plan.devices[1].program, shown.devices[1].program);
    }
};

QTEST_MAIN(SessionTest)
#include "session_test.moc"
