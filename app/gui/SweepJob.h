#pragma once
// One What-if sweep off the GUI thread (core/sweep/Sweep.h: runSweep). The engine reports each
// point from its worker threads; the job keeps the latest count and has the GUI thread pick it
// up with at most one event in flight, so a fast sweep never floods the event loop. Signals
// are emitted on the thread that owns the job (the GUI thread).
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <memory>
#include <string>

#include "core/sweep/Sweep.h"

namespace mario::gui {

class SweepJob : public QObject {
    Q_OBJECT
public:
    explicit SweepJob(QObject* parent = nullptr);
    ~SweepJob() override;  // cancels a running sweep and waits for it (one point per thread)

    // Starts a sweep; ignored while one runs.
    void start(const SweepSpec& spec);
    // Asks the sweep to stop; finished() follows within about one point's evaluation.
    void cancel();
    bool isRunning() const { return running_; }

    // After finished(): the result (a cancelled sweep's too, its points not run marked so), or
    // the error of a spec that could not run.
    std::shared_ptr<const SweepResult> result() const { return result_; }
    const std::string& error() const { return error_; }

signals:
    void progressed(int done, int total);
    void finished();

private:
    struct Shared;
    void drain(const std::shared_ptr<Shared>& shared);
    void onWorkerDone();

    // Its own one-thread pool to run the engine from (which spreads the points over threads of
    // its own): a sweep never starves the document's schedule computations in the global pool.
    QThreadPool pool_;
    QFutureWatcher<void> watcher_;
    std::shared_ptr<Shared> shared_;
    bool running_ = false;
    std::shared_ptr<const SweepResult> result_;
    std::string error_;
};

}  // namespace mario::gui
