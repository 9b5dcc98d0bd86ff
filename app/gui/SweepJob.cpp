#include "app/gui/SweepJob.h"

#include <QtConcurrent/QtConcurrentRun>
#include <atomic>

namespace mario::gui {

// What the worker and the owner's thread share about one sweep; a new sweep gets a new one,
// so a late event of an old sweep is recognised and dropped.
struct SweepJob::Shared {
    std::atomic<bool> cancel{false};
    std::atomic<int> done{0}, total{0};
    std::atomic<bool> drainPosted{false};
    // Written by the worker before it returns; read after the watcher says it finished.
    std::shared_ptr<const SweepResult> result;
    std::string error;
};

SweepJob::SweepJob(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
    connect(&watcher_, &QFutureWatcher<void>::finished, this, &SweepJob::onWorkerDone);
}

SweepJob::~SweepJob() {
    if (shared_) shared_->cancel = true;
    pool_.waitForDone();
}

void SweepJob::start(const SweepSpec& spec) {
    if (running_) return;
    auto shared = std::make_shared<Shared>();
    shared_ = shared;
    running_ = true;
    result_.reset();
    error_.clear();
    // `this` outlives the worker: the destructor cancels and waits for it.
    watcher_.setFuture(QtConcurrent::run(&pool_, [this, shared, spec] {
        auto progress = [this, shared](const SweepProgress& p, const SweepPoint&) {
            shared->done = p.done;
            shared->total = p.total;
            if (shared->drainPosted.exchange(true)) return;
            QMetaObject::invokeMethod(
                this, [this, shared] { drain(shared); }, Qt::QueuedConnection);
        };
        auto result = runSweep(spec, progress, &shared->cancel);
        if (result) shared->result = std::make_shared<const SweepResult>(std::move(*result));
        else shared->error = result.error().message;
    }));
}

void SweepJob::cancel() {
    if (running_ && shared_) shared_->cancel = true;
}

void SweepJob::drain(const std::shared_ptr<Shared>& shared) {
    if (shared != shared_) return;  // an earlier sweep's late event
    shared->drainPosted = false;
    emit progressed(shared->done, shared->total);
}

void SweepJob::onWorkerDone() {
    const std::shared_ptr<Shared> shared = shared_;
    if (!shared) return;
    drain(shared);  // the count that arrived after the last posted event
    result_ = shared->result;
    error_ = shared->error;
    running_ = false;
    emit finished();
}

}  // namespace mario::gui
