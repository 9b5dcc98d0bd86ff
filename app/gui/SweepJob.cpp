#include "app/gui/SweepJob.h"

#include <atomic>

namespace mario::gui {

// What the worker writes for the owner's thread about one sweep.
struct SweepJob::Shared {
    std::atomic<int> done{0}, total{0};
    // Written by the worker before it returns; read after it finished.
    std::shared_ptr<const SweepResult> result;
    std::string error;
};

SweepJob::SweepJob(QObject* parent) : BackgroundSearch(parent) {}

SweepJob::~SweepJob() { stopAndWait(); }

void SweepJob::start(const SweepSpec& spec) {
    if (isRunning()) return;
    auto shared = std::make_shared<Shared>();
    shared_ = shared;
    result_.reset();
    error_.clear();
    launch([shared, spec](const std::atomic<bool>& cancel, const Report& report) {
        auto progress = [&shared, &report](const SweepProgress& p, const SweepPoint&) {
            shared->done = p.done;
            shared->total = p.total;
            report();
        };
        auto result = runSweep(spec, progress, &cancel);
        if (result) shared->result = std::make_shared<const SweepResult>(std::move(*result));
        else shared->error = result.error().message;
    });
}

void SweepJob::drainProgress() { emit progressed(shared_->done, shared_->total); }

void SweepJob::collectResult() {
    result_ = shared_->result;
    error_ = shared_->error;
}

}  // namespace mario::gui
