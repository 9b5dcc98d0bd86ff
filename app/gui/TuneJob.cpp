#include "app/gui/TuneJob.h"

#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/tune/Tuner.h"

namespace mario::gui {

// What the worker and the owner's thread share about one search; a new search gets a new
// one, so a late event of an old search is recognised and dropped.
struct TuneJob::Shared {
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    QVector<QPointF> improvements;
    TuneProgress latest;
    double lastBest = -1;
    bool drainPosted = false;
    // Written by the worker before it returns; read after the watcher says it finished.
    std::optional<TuneResult> result;
    std::string error;
};

TuneJob::TuneJob(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
    connect(&watcher_, &QFutureWatcher<void>::finished, this, &TuneJob::onWorkerDone);
}

TuneJob::~TuneJob() {
    if (shared_) shared_->cancel = true;
    pool_.waitForDone();
}

bool TuneJob::isCancelling() const { return running_ && shared_ && shared_->cancel; }

void TuneJob::start(const Config& base, const TuneOptions& options) {
    if (running_) return;
    auto shared = std::make_shared<Shared>();
    shared_ = shared;
    running_ = true;
    result_.reset();
    error_.clear();
    latest_ = {};
    // `this` outlives the worker: the destructor cancels and waits for it.
    watcher_.setFuture(QtConcurrent::run(&pool_, [this, shared, base, options] {
        // Called from the tuner's threads, one at a time.
        auto progress = [this, shared](const TuneProgress& p, const TuneOutcome&) {
            std::lock_guard lock(shared->mutex);
            if (p.best_samples_per_s != shared->lastBest) {
                shared->improvements.append(QPointF(p.evaluated, p.best_samples_per_s));
                shared->lastBest = p.best_samples_per_s;
            }
            shared->latest = p;
            if (shared->drainPosted) return;
            shared->drainPosted = true;
            QMetaObject::invokeMethod(
                this, [this, shared] { drain(shared); }, Qt::QueuedConnection);
        };
        auto result = Tuner::run(base, options, progress, &shared->cancel);
        if (result) shared->result = std::move(*result);
        else shared->error = result.error().message;
    }));
}

void TuneJob::cancel() {
    if (running_ && shared_) shared_->cancel = true;
}

void TuneJob::drain(const std::shared_ptr<Shared>& shared) {
    if (shared != shared_) return;  // an earlier search's late event
    QVector<QPointF> improvements;
    {
        std::lock_guard lock(shared->mutex);
        improvements.swap(shared->improvements);
        latest_ = shared->latest;
        shared->drainPosted = false;
    }
    emit progressed(improvements, latest_);
}

void TuneJob::onWorkerDone() {
    const std::shared_ptr<Shared> shared = shared_;
    if (!shared) return;
    drain(shared);  // whatever arrived after the last posted event
    result_ = std::move(shared->result);
    error_ = shared->error;
    running_ = false;
    emit finished();
}

}  // namespace mario::gui
