#include "app/gui/BackgroundSearch.h"

#include <QtConcurrent/QtConcurrentRun>
#include <utility>

namespace mario::gui {

// What the worker and the owner's thread share about one run; a new run gets a new one, so a
// late report of an old run is recognised and dropped.
struct BackgroundSearch::Generation {
    std::atomic<bool> cancel{false};
    std::atomic<bool> drainPosted{false};
};

BackgroundSearch::BackgroundSearch(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
    connect(&watcher_, &QFutureWatcher<void>::finished, this, &BackgroundSearch::onWorkerDone);
}

BackgroundSearch::~BackgroundSearch() { stopAndWait(); }

void BackgroundSearch::stopAndWait() {
    if (current_) current_->cancel = true;
    pool_.waitForDone();
}

bool BackgroundSearch::isCancelling() const { return running_ && current_ && current_->cancel; }

void BackgroundSearch::launch(Work work) {
    if (running_) return;
    auto generation = std::make_shared<Generation>();
    current_ = generation;
    running_ = true;
    // `this` outlives the worker: the destructors cancel and wait for it.
    watcher_.setFuture(QtConcurrent::run(&pool_, [this, generation, work = std::move(work)] {
        const Report report = [this, generation] {
            if (generation->drainPosted.exchange(true)) return;
            QMetaObject::invokeMethod(
                this, [this, generation] { drain(generation); }, Qt::QueuedConnection);
        };
        work(generation->cancel, report);
    }));
}

void BackgroundSearch::cancel() {
    if (running_ && current_) current_->cancel = true;
}

void BackgroundSearch::drain(const std::shared_ptr<Generation>& generation) {
    if (generation != current_) return;  // an earlier run's late report
    // Cleared before reading, so a report that arrives while this one is read posts again.
    generation->drainPosted = false;
    drainProgress();
}

void BackgroundSearch::onWorkerDone() {
    if (!current_) return;
    drain(current_);  // what arrived after the last posted report
    collectResult();
    running_ = false;
    emit finished();
}

}  // namespace mario::gui
