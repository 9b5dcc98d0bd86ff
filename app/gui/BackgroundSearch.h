#pragma once
// One long search off the GUI thread (a What-if sweep, a tuner run), the plumbing its jobs share:
// its own one-thread pool, a cancel flag, and progress coalesced so that a search reporting
// many times a second from its worker threads never floods the event loop — the worker asks
// for a report, and the owner's thread (the GUI thread) gets at most one drainProgress() call
// in flight. Each run is a generation of its own: a late report of an earlier run is dropped.
// SweepJob and TuneJob say what runs and what a report carries.
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>

namespace mario::gui {

class BackgroundSearch : public QObject {
    Q_OBJECT
public:
    ~BackgroundSearch() override;

    // Asks the running search to stop; finished() follows within about one step of it (a
    // sweep's point, a tuner's candidate).
    void cancel();
    bool isRunning() const { return running_; }
    bool isCancelling() const;

signals:
    void finished();

protected:
    explicit BackgroundSearch(QObject* parent);

    // Called on the worker, from any of the search's threads: asks the owner's thread to call
    // drainProgress() unless a call is already on its way.
    using Report = std::function<void()>;
    // The search itself, on the job's pool: it polls `cancel` and calls `report` after each step.
    using Work = std::function<void(const std::atomic<bool>& cancel, const Report& report)>;

    // Starts `work`; nothing while a search runs (the jobs check isRunning() first, to set up
    // the state the new run writes into).
    void launch(Work work);
    // Cancels the running search and waits for its worker: a subclass calls it first in its
    // destructor, so that no worker outlives the state it writes into.
    void stopAndWait();

    // On the owner's thread, for the current run only: take what the worker has reported.
    virtual void drainProgress() = 0;
    // On the owner's thread once the worker returned (after a last drainProgress()), before
    // finished(): take the result.
    virtual void collectResult() = 0;

private:
    struct Generation;
    void drain(const std::shared_ptr<Generation>& generation);
    void onWorkerDone();

    // Its own pool: the search spreads its work over threads of its own, and must never starve
    // the document's schedule computations in the global pool.
    QThreadPool pool_;
    QFutureWatcher<void> watcher_;
    std::shared_ptr<Generation> current_;
    bool running_ = false;
};

}  // namespace mario::gui
