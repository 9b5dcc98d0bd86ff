#pragma once
// Asks a mario-executor what it can run (`mario-executor capabilities`, one JSON line whose
// format core/io/ExecutorCapabilities.h owns), in the background through QProcess, so that the
// window can disable "Run on one GPU" with the reason where this executor has no CUDA instead
// of letting the run fail in small text under "waiting for measurements…" (issue 14, item 6).
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <optional>

#include "core/io/ExecutorCapabilities.h"

class QAction;
class QTimer;

namespace mario::gui {

class ExecutorProbe : public QObject {
    Q_OBJECT
public:
    enum class State { NotAsked, Asking, Answered, Failed };

    explicit ExecutorProbe(QObject* parent = nullptr);
    ~ExecutorProbe() override;  // kills a question still running

    // Starts `EXE capabilities`; answered() follows, also when it fails. An empty or missing
    // executable fails at once (answered() is still queued, never emitted from inside ask()).
    void ask(const QString& executable);

    State state() const { return state_; }
    QString executable() const { return executable_; }
    // The answer, once state() is Answered.
    const std::optional<ExecutorCapabilities>& capabilities() const { return capabilities_; }
    // Why there is no answer (Failed): the executor is missing, crashed, or does not know the
    // question (an executor older than `capabilities`).
    QString error() const { return error_; }

    // The mario-executor the workbench runs: beside it in a build tree (../executor/) or an
    // installation (the same bin folder). Empty when there is none.
    static QString findExecutable(const QString& applicationDir);

signals:
    void answered();

private:
    void finish(State state);

    QProcess* process_ = nullptr;
    QTimer* timeout_;
    State state_ = State::NotAsked;
    QString executable_;
    QString error_;
    std::optional<ExecutorCapabilities> capabilities_;
};

// Enables Tools → Run on one GPU only when the executor can run on CUDA; otherwise disables it
// with the reason as its tooltip and status tip ("this mario-executor's LibTorch has no CUDA…").
// Also while the question is out, and when it failed. Menus holding the action show tooltips.
void describeGpuAction(QAction* runOnGpu, const ExecutorProbe& probe);

// The executor's arguments for a run on one GPU: every pipeline device on its own SM partition
// (docs/gpu.md); where the executor said it cannot partition, the devices share the SMs
// (--shared-streams) and the run's note says so, rather than failing.
QStringList gpuRunArguments(const ExecutorProbe& probe);

}  // namespace mario::gui
