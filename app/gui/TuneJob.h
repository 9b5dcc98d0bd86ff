#pragma once
// One tuner search off the GUI thread. Tuner::run reports progress from its worker threads
// many times a second; the job collects it under a lock and the GUI thread picks it up as
// BackgroundSearch coalesces it, so the window repaints at its own pace however fast
// candidates go by. Signals are emitted on the thread that owns the job (the GUI thread).
#include <QPointF>
#include <QVector>
#include <memory>
#include <optional>
#include <string>

#include "app/gui/BackgroundSearch.h"
#include "core/model/Config.h"
#include "core/tune/TuneTypes.h"

namespace mario::gui {

class TuneJob : public BackgroundSearch {
    Q_OBJECT
public:
    explicit TuneJob(QObject* parent = nullptr);
    ~TuneJob() override;  // cancels a running search and waits for it (one candidate)

    // Starts a search; ignored while one runs.
    void start(const Config& base, const TuneOptions& options);

    // After finished(): the result (a cancelled search's too), or the error.
    const std::optional<TuneResult>& result() const { return result_; }
    const std::string& error() const { return error_; }
    // The latest progress report (also after finished()).
    const TuneProgress& latest() const { return latest_; }

signals:
    // On the owner's thread: the points at which the best throughput improved since the
    // last report, as (candidates evaluated, best samples/s), then the latest progress.
    void progressed(const QVector<QPointF>& improvements, const mario::TuneProgress& latest);

private:
    struct Shared;
    void drainProgress() override;
    void collectResult() override;

    std::shared_ptr<Shared> shared_;  // the current search's
    std::optional<TuneResult> result_;
    std::string error_;
    TuneProgress latest_;
};

}  // namespace mario::gui
