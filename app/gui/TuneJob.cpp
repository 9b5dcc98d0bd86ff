#include "app/gui/TuneJob.h"

#include <atomic>
#include <mutex>

#include "core/tune/Tuner.h"

namespace mario::gui {

// What the worker writes for the owner's thread about one search.
struct TuneJob::Shared {
    std::mutex mutex;
    QVector<QPointF> improvements;
    TuneProgress latest;
    double lastBest = -1;
    // Written by the worker before it returns; read after it finished.
    std::optional<TuneResult> result;
    std::string error;
};

TuneJob::TuneJob(QObject* parent) : BackgroundSearch(parent) {}

TuneJob::~TuneJob() { stopAndWait(); }

void TuneJob::start(const Config& base, const TuneOptions& options) {
    if (isRunning()) return;
    auto shared = std::make_shared<Shared>();
    shared_ = shared;
    result_.reset();
    error_.clear();
    latest_ = {};
    launch([shared, base, options](const std::atomic<bool>& cancel, const Report& report) {
        // Called from the tuner's threads, one at a time.
        auto progress = [&shared, &report](const TuneProgress& p, const TuneOutcome&) {
            {
                std::lock_guard lock(shared->mutex);
                if (p.best_samples_per_s != shared->lastBest) {
                    shared->improvements.append(QPointF(p.evaluated, p.best_samples_per_s));
                    shared->lastBest = p.best_samples_per_s;
                }
                shared->latest = p;
            }
            report();
        };
        auto result = Tuner::run(base, options, progress, &cancel);
        if (result) shared->result = std::move(*result);
        else shared->error = result.error().message;
    });
}

void TuneJob::drainProgress() {
    QVector<QPointF> improvements;
    {
        std::lock_guard lock(shared_->mutex);
        improvements.swap(shared_->improvements);
        latest_ = shared_->latest;
    }
    emit progressed(improvements, latest_);
}

void TuneJob::collectResult() {
    result_ = std::move(shared_->result);
    error_ = shared_->error;
}

}  // namespace mario::gui
