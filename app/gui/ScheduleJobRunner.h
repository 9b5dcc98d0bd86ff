#pragma once
// Runs the document's ScheduleJobs on a worker thread, one at a time as far as anyone sees:
// a new job supersedes the one running, whose result is then dropped, as is a cancelled
// job's. A dropped job is asked to stop at its next step (it cannot be interrupted inside
// one), so it costs at most a step's time on its thread.
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>

#include "app/gui/ScheduleJob.h"

namespace mario::gui {

class ScheduleJobRunner : public QObject {
    Q_OBJECT
public:
    explicit ScheduleJobRunner(QObject* parent = nullptr);
    ~ScheduleJobRunner() override;

    // Synchronous: the job runs on the calling thread and finished() is emitted before this
    // returns (tests and --screenshot).
    void start(ScheduleJob job, bool synchronous);
    void cancel();
    bool isRunning() const { return running_ != nullptr; }

signals:
    // Step `step` of kScheduleJobSteps began, doing `what` ("passes and simulation").
    void progressed(int step, const QString& what);
    // Not emitted for a cancelled or superseded job.
    void finished(const mario::gui::ScheduleJobResult& result);

private:
    void drop();

    QPointer<QFutureWatcher<ScheduleJobResult>> running_;
    std::shared_ptr<std::atomic<bool>> runningStop_;  // the running job's ScheduleJob::stop
};

}  // namespace mario::gui
