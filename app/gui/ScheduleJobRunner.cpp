#include "app/gui/ScheduleJobRunner.h"

#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>

namespace mario::gui {

ScheduleJobRunner::ScheduleJobRunner(QObject* parent) : QObject(parent) {}

// A job still running finishes on its worker with nobody listening; it stops at its next step.
ScheduleJobRunner::~ScheduleJobRunner() { drop(); }

void ScheduleJobRunner::start(ScheduleJob job, bool synchronous) {
    drop();
    if (synchronous) {
        const ScheduleJobResult result = runScheduleJob(job, [this](int step, const QString& what) {
            emit progressed(step, what);
            return true;
        });
        emit finished(result);
        return;
    }
    auto* watcher = new QFutureWatcher<ScheduleJobResult>(this);
    running_ = watcher;
    runningStop_ = job.stop;
    // The promise's progress text carries the step's words; its value the step (plus one).
    connect(watcher, &QFutureWatcher<ScheduleJobResult>::progressTextChanged, this,
            [this, watcher](const QString& what) {
                if (watcher == running_) emit progressed(watcher->progressValue() - 1, what);
            });
    connect(watcher, &QFutureWatcher<ScheduleJobResult>::finished, this, [this, watcher] {
        watcher->deleteLater();
        if (watcher != running_ || watcher->isCanceled() || watcher->future().resultCount() == 0) return;
        running_ = nullptr;
        const ScheduleJobResult result = watcher->result();
        if (!result.cancelled) emit finished(result);
    });
    watcher->setFuture(QtConcurrent::run([job = std::move(job)](QPromise<ScheduleJobResult>& promise) {
        // Step k is reported as k + 1: a future reports only a value above the last, and 0 is
        // where it starts.
        promise.setProgressRange(0, kScheduleJobSteps + 1);
        promise.addResult(runScheduleJob(job, [&promise](int step, const QString& what) {
            if (promise.isCanceled()) return false;
            promise.setProgressValueAndText(step + 1, what);
            return true;
        }));
    }));
}

void ScheduleJobRunner::cancel() { drop(); }

void ScheduleJobRunner::drop() {
    if (!running_) return;
    QFutureWatcher<ScheduleJobResult>* watcher = running_;
    running_ = nullptr;
    watcher->disconnect(this);
    watcher->cancel();                            // the job sees it at its next step
    if (runningStop_) runningStop_->store(true);  // and its passes at their next safe point
    runningStop_.reset();
    watcher->deleteLater();
}

}  // namespace mario::gui
