// ScheduleDocument's computations (ScheduleDocument.cpp has the changes themselves): starting a
// job, what its result does to the document, the cache of computed states, and showing one.
// Nothing of the document changes until a job's whole result is there; then the state, the
// schedule and the undo history change in one go on the GUI thread, from shared pieces.
#include <QFileInfo>
#include <QStringList>

#include "app/gui/ScheduleDocument.h"
#include "app/gui/SetStateCommand.h"
#include "core/session/ScheduleFingerprint.h"

namespace mario::gui {
namespace {

QString passListText(const std::vector<PassId>& passes) {
    QStringList names;
    for (PassId pass : passes) names << QString::fromUtf8(passName(pass).data(), passName(pass).size());
    return names.isEmpty() ? QStringLiteral("none") : names.join(", ");
}

// The cache holds at most this many states, and this many instructions together: a state of
// 1.8 million instructions holds about 0.3 GB with its memory curves and its timeline.
constexpr int kCachedStates = 12;
constexpr std::size_t kCachedInstructions = std::size_t{4} << 20;

}  // namespace

bool ScheduleDocument::open(const QString& path, QString* error, bool* deadlocked) {
    const ScheduleJobResult opened =
        runScheduleJob(ScheduleJob::open(path, presets_), [](int, const QString&) { return true; });
    if (!opened.ok) {
        *error = opened.error;
        if (deadlocked) *deadlocked = opened.deadlocked;
        return false;
    }
    dropPending();
    adopt(opened, path);
    return true;
}

void ScheduleDocument::openAsync(const QString& path) {
    emit openStarted(path);
    start({Pending::Kind::Open, nullptr, false, path, 0}, ScheduleJob::open(path, presets_));
}

void ScheduleDocument::cancelComputation() {
    if (!pending_) return;
    if (pending_->kind != Pending::Kind::Open)
        emit statusMessage(tr("%1 cancelled; the schedule shown is unchanged").arg(pending_->description));
    dropPending();
}

void ScheduleDocument::start(Pending pending, ScheduleJob job) {
    // Undo pressed again while an undo computes: Cancel still returns to the state shown.
    if (pending_ && pending_->kind == Pending::Kind::Stack && pending.kind == Pending::Kind::Stack)
        pending.shownIndex = pending_->shownIndex;
    else dropPending(true, false);
    const QString what = pending.kind == Pending::Kind::Open
                             ? tr("Opening %1").arg(QFileInfo(pending.description).fileName())
                             : pending.description;
    pending_ = std::move(pending);
    failure_.clear();
    emit computationStarted(what);
    jobs_.start(std::move(job), synchronous_);
}

void ScheduleDocument::dropPending(bool moveBack, bool announce) {
    if (!pending_) return;
    const Pending dropped = *pending_;
    pending_.reset();
    jobs_.cancel();
    if (dropped.kind == Pending::Kind::Stack && moveBack) {
        quiet_ = true;  // every state between is skipped: the one shown is where it ends
        undo_.setIndex(dropped.shownIndex);
        quiet_ = false;
    }
    if (dropped.kind == Pending::Kind::Open)
        emit statusMessage(tr("Opening %1 cancelled; the current schedule is unchanged")
                               .arg(QFileInfo(dropped.description).fileName()));
    if (moveBack) noteModified();
    if (announce) emit computationEnded();
}

void ScheduleDocument::finish(const ScheduleJobResult& result) {
    if (!pending_) return;
    const Pending done = *pending_;
    if (!result.ok) {
        failure_ = result.error;
        if (done.kind == Pending::Kind::Open) {
            pending_.reset();
            emit computationEnded();
            emit openFinished(done.description, false, result.error);
            return;
        }
        dropPending();  // an undo that failed: the stack back where the state shown is
        emit statusMessage(done.generate ? tr("Settings not applied: %1").arg(result.error) : result.error);
        emit computationFailed(result.error);
        emit changeFailed(result.error);
        return;
    }
    pending_.reset();
    remember(result.shown);
    switch (done.kind) {
        case Pending::Kind::Open: adopt(result, done.description); break;
        case Pending::Kind::Change:
            // Settings changed and back again before the plan was generated: nothing to add.
            if (!shown_ || result.shown->fingerprint != shown_->fingerprint) pushShown(result.shown, done.description);
            break;
        case Pending::Kind::Stack: show(result.shown); break;
    }
    noteModified();
    emit computationEnded();
    if (done.kind == Pending::Kind::Open) emit openFinished(done.description, true, QString());
}

void ScheduleDocument::applyState(const SharedInput& state, quint64 key, const QString& what) {
    if (quiet_) return;
    const SharedShown known = shown_ && key == shown_->fingerprint ? shown_ : cached(key);
    if (!known) {
        // The stack has moved already (QUndoStack); the window keeps showing the state at
        // its index now until this one is computed, and Cancel moves the stack back.
        start({Pending::Kind::Stack, state, false, what, undo_.index()}, ScheduleJob::compute(state, false));
        return;
    }
    dropPending(false);  // the stack is moving to a known state: whatever computed gives way
    if (known != shown_) show(known);
}

void ScheduleDocument::pushShown(const SharedShown& shown, const QString& description) {
    const quint64 beforeKey = shown_ ? shown_->fingerprint : scheduleFingerprint(*state_);
    // The command's redo() finds `shown` in the cache and shows it before push() returns.
    undo_.push(new SetStateCommand(this, state_, beforeKey, shown->input, shown->fingerprint, description));
}

void ScheduleDocument::adopt(const ScheduleJobResult& opened, const QString& file) {
    path_ = opened.documentPath;
    undo_.clear();
    if (opened.restored) restoredFrom_ = file;
    // A restored session was never saved as it is now: it stays modified until saved.
    restoredUnsaved_ = opened.restored;
    const auto& config = opened.shown->input->config;
    whatIf_ = config ? config->what_if : std::nullopt;
    whatIfUnsaved_ = false;
    show(opened.shown);
    emit pathChanged(path_);
    noteModified();
    emit whatIfLoaded();
    const QString passes = passListText(opened.shown->input->passes);
    emit statusMessage(opened.restored
                           ? tr("Restored the session of %1 (passes: %2, %n hand edit(s))", nullptr,
                                int(opened.shown->input->edits.size()))
                                 .arg(path_.isEmpty() ? tr("an unsaved schedule") : QFileInfo(path_).fileName(), passes)
                           : tr("Opened %1 (passes: %2)").arg(QFileInfo(file).fileName(), passes));
}

SharedShown ScheduleDocument::cached(quint64 key) const { return cache_.value(key); }

void ScheduleDocument::forgetComputedStates() {
    cache_.clear();
    cacheOrder_.clear();
    if (shown_) remember(shown_);
}

void ScheduleDocument::remember(const SharedShown& shown) {
    const quint64 key = shown->fingerprint;
    if (cache_.contains(key)) return;
    cache_.insert(key, shown);
    cacheOrder_.append(key);
    std::size_t instructions = 0;
    for (const SharedShown& entry : std::as_const(cache_)) instructions += entry->instructionCount();
    // The oldest go first; never the one just computed nor the one shown.
    for (int i = 0;
         i < cacheOrder_.size() && (cacheOrder_.size() > kCachedStates || instructions > kCachedInstructions);) {
        const SharedShown entry = cache_.value(cacheOrder_[i]);
        if (entry == shown || entry == shown_) {
            ++i;
            continue;
        }
        instructions -= entry->instructionCount();
        cache_.remove(cacheOrder_.takeAt(i));
    }
}

void ScheduleDocument::show(const SharedShown& shown) {
    state_ = shown->input;
    shown_ = shown;
    dropAnswers_.clear();
    const ComputedSchedule& result = shown->schedule;
    if (!result.skipped_edits.empty()) {
        QStringList skipped;
        for (const HandEdit& edit : result.skipped_edits) skipped << QString::fromStdString(toActionString(edit.moved));
        const QString message =
            tr("%n hand edit(s) no longer apply to this schedule and were set aside (%1); undo brings them back",
               nullptr, skipped.size())
                .arg(skipped.join(", "));
        emit statusMessage(message);
        emit editsSetAside(message);
    }
    writeAutosave();
    emit computed();
}

}  // namespace mario::gui
