#include "app/gui/ScheduleDocument.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "app/gui/AutosaveFile.h"
#include "app/gui/SessionAutosave.h"
#include "app/gui/SetStateCommand.h"
#include "core/io/ConfigJson.h"
#include "core/session/HandEdits.h"
#include "core/session/PlanBuilder.h"
#include "core/session/ScheduleFiles.h"
#include "core/session/ScheduleFingerprint.h"

namespace mario::gui {
namespace {

PresetLibrary locatePresets() {
    auto found = PresetLibrary::locate(QCoreApplication::applicationFilePath().toStdString());
    return found ? *found : PresetLibrary(std::string{});
}

QString passListText(const std::vector<PassId>& passes) {
    QStringList names;
    for (PassId pass : passes) names << QString::fromUtf8(passName(pass).data(), passName(pass).size());
    return names.isEmpty() ? QStringLiteral("none") : names.join(", ");
}

}  // namespace

ScheduleDocument::ScheduleDocument(QObject* parent) : QObject(parent), presets_(locatePresets()) {
    connect(&undo_, &QUndoStack::cleanChanged, this, [this] { emit modifiedChanged(isModified()); });
}

ScheduleDocument::~ScheduleDocument() = default;  // a pending autosave write finishes first

bool ScheduleDocument::open(const QString& path, QString* error, bool* deadlocked) {
    LoadedDocument loaded = loadDocument(path, presets_);
    if (!loaded.ok) {
        *error = loaded.error;
        if (deadlocked) *deadlocked = loaded.deadlocked;
        return false;
    }
    adopt(std::move(loaded), path);
    return true;
}

void ScheduleDocument::openAsync(const QString& path) {
    // Core has no cancellation hook: a cancelled or superseded load runs to its end on its
    // worker and its result is dropped (the generation no longer matches). Nothing of the
    // open session is touched until a result is accepted.
    const quint64 generation = ++openGeneration_;
    opening_ = path;
    emit openStarted(path);
    auto* watcher = new QFutureWatcher<LoadedDocument>(this);
    connect(watcher, &QFutureWatcher<LoadedDocument>::finished, this, [this, watcher, path, generation] {
        watcher->deleteLater();
        if (generation != openGeneration_) return;
        opening_.clear();
        LoadedDocument loaded = watcher->result();
        if (!loaded.ok) {
            emit openFinished(path, false, loaded.error);
            return;
        }
        adopt(std::move(loaded), path);
        emit openFinished(path, true, QString());
    });
    watcher->setFuture(QtConcurrent::run(loadDocument, path, presets_));
}

void ScheduleDocument::cancelOpen() {
    if (opening_.isEmpty()) return;
    ++openGeneration_;
    emit statusMessage(
        tr("Opening %1 cancelled; the current schedule is unchanged").arg(QFileInfo(opening_).fileName()));
    opening_.clear();
}

void ScheduleDocument::adopt(LoadedDocument loaded, const QString& file) {
    path_ = loaded.path;
    emit pathChanged(path_);
    undo_.clear();
    if (loaded.restored) restoredFrom_ = file;
    // A restored session was never saved as it is now: it stays modified until saved.
    restoredUnsaved_ = loaded.restored;
    emit modifiedChanged(isModified());
    applyState(loaded.state);
    const QString passes = passListText(loaded.state.passes);
    emit statusMessage(
        loaded.restored
            ? tr("Restored the session of %1 (passes: %2, %n hand edit(s))", nullptr, int(loaded.state.edits.size()))
                  .arg(path_.isEmpty() ? tr("an unsaved schedule") : QFileInfo(path_).fileName(), passes)
            : tr("Opened %1 (passes: %2)").arg(QFileInfo(file).fileName(), passes));
}

bool ScheduleDocument::saveAs(const QString& path, QString* error) {
    auto written = saveSchedule(path.toStdString(), state_, current_.ok ? &current_.plan : nullptr);
    if (!written) {
        *error = QString::fromStdString(written.error().message);
        return false;
    }
    if (path_ != path) {
        path_ = path;
        emit pathChanged(path_);
    }
    restoredUnsaved_ = false;
    undo_.setClean();
    emit modifiedChanged(false);
    emit statusMessage(tr("Saved %1").arg(QFileInfo(path).fileName()));
    return true;
}

views::TimeBase ScheduleDocument::timeBase() const {
    return state_.config && state_.config->unit_costs ? views::TimeBase::Units : views::TimeBase::Milliseconds;
}

bool ScheduleDocument::canSaveInPlace() const {
    return !path_.isEmpty() && !AutosaveFile::isAutosavePath(path_) && !saveRefusal(path_.toStdString(), state_);
}

QString ScheduleDocument::dropRefusal(int device, int programIndex, double dropTimeMs) {
    if (!current_.ok) return tr("no schedule");
    if (device < 0 || device >= static_cast<int>(current_.plan.devices.size())) return tr("no such device");
    const int insertion = dropInsertionIndex(current_.plan, current_.result, device, programIndex, dropTimeMs);
    const QString key = QStringLiteral("%1/%2/%3").arg(device).arg(programIndex).arg(insertion);
    if (auto known = dropAnswers_.constFind(key); known != dropAnswers_.constEnd()) return *known;
    auto edit = editForDrop(current_.plan, current_.result, device, programIndex, dropTimeMs);
    const QString reason = edit ? QString() : QString::fromStdString(edit.error().message);
    dropAnswers_.insert(key, reason);
    return reason;
}

void ScheduleDocument::setPassEnabled(PassId pass, bool enabled) {
    std::vector<PassId> passes = state_.passes;
    const auto it = std::find(passes.begin(), passes.end(), pass);
    if (enabled == (it != passes.end())) return;
    if (enabled) passes.push_back(pass);
    else passes.erase(it);
    // Keep paper order so the pass manager and the summary read the same way every time.
    std::sort(passes.begin(), passes.end());
    const QString name = QString::fromUtf8(passName(pass).data(), passName(pass).size());
    setPasses(passes, enabled ? tr("Enable %1").arg(name) : tr("Disable %1").arg(name));
}

void ScheduleDocument::setPasses(const std::vector<PassId>& passes, const QString& description) {
    ScheduleInput next = state_;
    next.passes = passes;
    pushState(std::move(next), description);
}

bool ScheduleDocument::setConfig(const Config& config, QString* error) {
    return openTuned(config, state_.passes, PassEffort{}, tr("Change settings"), error);
}

bool ScheduleDocument::openTuned(const Config& config, const std::vector<PassId>& passes, PassEffort effort,
                                 const QString& description, QString* error) {
    // The file reader's rules: a combination a config file could not hold is never drawn or
    // saved; the last valid schedule stays, and the banner says what to change.
    if (auto invalid = checkConfig(config)) {
        *error = QString::fromStdString(invalid->message);
        emit statusMessage(tr("Settings not applied: %1").arg(*error));
        return false;
    }
    auto plan = buildPlan(config);
    if (!plan) {
        *error = QString::fromStdString(plan.error().message);
        emit statusMessage(tr("Settings not applied: %1").arg(*error));
        return false;
    }
    ScheduleInput next = state_;
    next.config = config;
    next.source = std::move(*plan);
    next.passes = passes;
    next.effort = effort;
    // Edits name instructions, not positions: they are replayed on the new schedule, and any
    // that no longer apply are set aside with a notice (editsSetAside); undo brings them back.
    pushState(std::move(next), description);
    return true;
}

bool ScheduleDocument::requestMove(int device, int programIndex, double dropTimeMs, QString* reason) {
    if (!current_.ok) return false;
    auto edit = editForDrop(current_.plan, current_.result, device, programIndex, dropTimeMs);
    if (!edit) {
        *reason = QString::fromStdString(edit.error().message);
        emit statusMessage(*reason);
        return false;
    }
    if (!*edit) return true;  // dropped where it was
    ScheduleInput next = state_;
    next.edits.push_back(**edit);
    pushState(std::move(next),
              tr("Move %1 on device %2").arg(QString::fromStdString(toActionString((*edit)->moved))).arg(device));
    return true;
}

void ScheduleDocument::pushState(ScheduleInput next, const QString& description) {
    undo_.push(new SetStateCommand(this, state_, std::move(next), description));
}

void ScheduleDocument::applyState(const ScheduleInput& state) {
    state_ = state;
    recompute();
}

void ScheduleDocument::recompute() {
    const quint64 generation = ++generation_;
    if (auto hit = cache_.constFind(scheduleFingerprint(state_)); hit != cache_.constEnd()) {
        ComputedSchedule cached = *hit;
        cached.generation = generation;
        accept(std::move(cached));
        return;
    }
    if (synchronous_) {
        accept(computeSchedule(state_, generation));
        return;
    }
    auto* watcher = new QFutureWatcher<ComputedSchedule>(this);
    connect(watcher, &QFutureWatcher<ComputedSchedule>::finished, this, [this, watcher] {
        accept(watcher->result());
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run(computeSchedule, state_, generation));
}

void ScheduleDocument::accept(ComputedSchedule result) {
    if (result.generation != generation_) return;  // a newer state is on its way
    if (!result.ok) {
        emit computationFailed(result.error);
        emit statusMessage(result.error);
        return;
    }
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
    const quint64 key = scheduleFingerprint(state_);
    if (!cache_.contains(key)) {
        cache_.insert(key, result);
        cacheOrder_.append(key);
        if (cacheOrder_.size() > 12) cache_.remove(cacheOrder_.takeFirst());
    }
    current_ = std::move(result);
    dropAnswers_.clear();
    writeAutosave();
    emit computed();
}

void ScheduleDocument::enableAutosave(const QString& directory) {
    autosave_ = std::make_unique<SessionAutosave>(directory);
    connect(autosave_.get(), &SessionAutosave::writeFailed, this,
            [this](const QString& error) { emit statusMessage(tr("Autosave failed: %1").arg(error)); });
    connect(autosave_.get(), &SessionAutosave::written, this, [this] {
        // The restored session now lives in ours: the crashed one's file can go.
        if (restoredFrom_.isEmpty()) return;
        SessionAutosave::removeOrphan(restoredFrom_);
        restoredFrom_.clear();
    });
}

void ScheduleDocument::discardAutosave() {
    if (autosave_) autosave_->discard();
}

// Every computed change is written to this session's autosave (the whole document: config,
// source plan, passes, edits and the original path), so a crash loses nothing; the next
// start offers it back (MainWindow::offerRestore).
void ScheduleDocument::writeAutosave() {
    if (autosave_) autosave_->save(state_, path_);
}

}  // namespace mario::gui
