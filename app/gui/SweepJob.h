#pragma once
// One What-if sweep off the GUI thread (core/sweep/Sweep.h: runSweep). The engine reports each
// point from its worker threads; the job keeps the latest count, which the GUI thread picks up
// as BackgroundSearch coalesces it. Signals are emitted on the thread that owns the job (the
// GUI thread).
#include <memory>
#include <string>

#include "app/gui/BackgroundSearch.h"
#include "core/sweep/Sweep.h"

namespace mario::gui {

class SweepJob : public BackgroundSearch {
    Q_OBJECT
public:
    explicit SweepJob(QObject* parent = nullptr);
    ~SweepJob() override;  // cancels a running sweep and waits for it (one point per thread)

    // Starts a sweep; ignored while one runs.
    void start(const SweepSpec& spec);

    // After finished(): the result (a cancelled sweep's too, its points not run marked so), or
    // the error of a spec that could not run.
    std::shared_ptr<const SweepResult> result() const { return result_; }
    const std::string& error() const { return error_; }

signals:
    void progressed(int done, int total);

private:
    struct Shared;
    void drainProgress() override;
    void collectResult() override;

    std::shared_ptr<Shared> shared_;  // the current sweep's
    std::shared_ptr<const SweepResult> result_;
    std::string error_;
};

}  // namespace mario::gui
