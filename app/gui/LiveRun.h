#pragma once
// Live profiling (executor issue): starts `mario-executor run PLAN --events` as a child
// process and turns its JSON lines into signals as they arrive. Only app/ starts the
// executor; the views just draw what this reports.
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <optional>
#include <string>

class QTimer;

namespace mario::gui {

class LiveRun : public QObject {
    Q_OBJECT
public:
    explicit LiveRun(QObject* parent = nullptr);
    ~LiveRun() override;  // kills a process still running

    // Starts `EXE run PLAN --backend cpu --model MODEL --events EXTRA...`. Returns false
    // when a run is already under way; a missing executable is reported through failed().
    bool start(const QString& planPath, const QString& executablePath,
               const QString& modelSpec = QStringLiteral("tiny"), const QStringList& extraArgs = {});
    // The executor model to run a schedule on: the model a measured profile was measured on
    // (its "model" field), so the live run measures what the simulation was costed with;
    // "tiny" without a profile, or when the profile names none.
    static QString modelSpecFor(const std::optional<std::string>& profilePath);
    // Ends the run cleanly: terminate, then kill when it is still alive after 2 s. finished()
    // follows; failed() does not (the user asked for it).
    void stop();
    bool isRunning() const;
    bool stopRequested() const { return stopRequested_; }
    QJsonObject summary() const { return summary_; }  // the final line, empty until then
    QJsonObject hello() const { return hello_; }

signals:
    void started();
    // One instruction of one iteration, in ms on the executor's clock (steady clock on CPU).
    void instructionFinished(int device, int index, double startMs, double endMs, int iteration);
    // A whole step has finished; `iteration` counts from 0 (the executor's warm-up first).
    void iterationFinished(double stepMs, double loss, int iteration);
    void failed(const QString& oneLine);
    void finished();

private:
    void readOutput();
    void handleLine(const QByteArray& line);
    void fail(const QString& message);
    void end();

    QProcess* process_ = nullptr;
    QTimer* killTimer_;
    QByteArray buffer_;
    QByteArray stderr_;
    QString lastText_;  // the last stdout line that was not JSON (some errors arrive there)
    QJsonObject summary_, hello_;
    bool stopRequested_ = false;
    bool failedReported_ = false;
    bool ended_ = true;
};

}  // namespace mario::gui
