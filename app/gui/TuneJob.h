#pragma once
// One tuner search off the GUI thread. Tuner::run reports progress from its worker threads
// many times a second; the job collects it under a lock and has the GUI thread pick it up
// with at most one event in flight, so the window repaints at its own pace however fast
// candidates go by. Signals are emitted on the thread that owns the job (the GUI thread).
#include <QFutureWatcher>
#include <QObject>
#include <QPointF>
#include <QThreadPool>
#include <QVector>
#include <memory>
#include <optional>
#include <string>

#include "core/model/Config.h"
#include "core/tune/TuneTypes.h"

namespace mario::gui {

class TuneJob : public QObject {
    Q_OBJECT
public:
    explicit TuneJob(QObject* parent = nullptr);
    ~TuneJob() override;  // cancels a running search and waits for it (one candidate)

    // Starts a search; ignored while one runs.
    void start(const Config& base, const TuneOptions& options);
    // Asks the search to stop; finished() follows within about one candidate's evaluation.
    void cancel();
    bool isRunning() const { return running_; }
    bool isCancelling() const;

    // After finished(): the result (a cancelled search's too), or the error.
    const std::optional<TuneResult>& result() const { return result_; }
    const std::string& error() const { return error_; }
    // The latest progress report (also after finished()).
    const TuneProgress& latest() const { return latest_; }

signals:
    // On the owner's thread: the points at which the best throughput improved since the
    // last report, as (candidates evaluated, best samples/s), then the latest progress.
    void progressed(const QVector<QPointF>& improvements, const mario::TuneProgress& latest);
    void finished();

private:
    struct Shared;
    void drain(const std::shared_ptr<Shared>& shared);
    void onWorkerDone();

    // Its own one-thread pool: the tuner spreads its work over threads of its own, and the
    // search must never starve the document's schedule computations in the global pool.
    QThreadPool pool_;
    QFutureWatcher<void> watcher_;
    std::shared_ptr<Shared> shared_;
    bool running_ = false;
    std::optional<TuneResult> result_;
    std::string error_;
    TuneProgress latest_;
};

}  // namespace mario::gui
