#include "app/gui/ScheduleDocument.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <algorithm>

#include "app/gui/AutosaveFile.h"
#include "app/gui/SessionAutosave.h"
#include "app/gui/SetStateCommand.h"
#include "core/io/ConfigJson.h"
#include "core/session/HandEdits.h"
#include "core/session/ScheduleFiles.h"
#include "core/session/ScheduleFingerprint.h"

namespace mario::gui {
namespace {

PresetLibrary locatePresets() {
    auto found = PresetLibrary::locate(QCoreApplication::applicationFilePath().toStdString());
    return found ? *found : PresetLibrary(std::string{});
}

}  // namespace

ScheduleDocument::ScheduleDocument(QObject* parent)
    : QObject(parent), presets_(locatePresets()), state_(std::make_shared<const ScheduleInput>()) {
    connect(&undo_, &QUndoStack::cleanChanged, this, &ScheduleDocument::noteModified);
    connect(&undo_, &QUndoStack::indexChanged, this, &ScheduleDocument::noteModified);
    connect(&jobs_, &ScheduleJobRunner::progressed, this,
            [this](int step, const QString& what) { emit computationProgress(step, kScheduleJobSteps, what); });
    connect(&jobs_, &ScheduleJobRunner::finished, this, &ScheduleDocument::finish);
}

ScheduleDocument::~ScheduleDocument() = default;  // a pending autosave write finishes first

const ComputedSchedule& ScheduleDocument::current() const {
    static const ComputedSchedule none;
    return shown_ ? shown_->schedule : none;
}

bool ScheduleDocument::isModified() const {
    // While an undo or redo computes, the stack has moved but the window still shows the
    // state at pending_->shownIndex: the title says whether that one is saved.
    const int shownIndex = pending_ && pending_->kind == Pending::Kind::Stack ? pending_->shownIndex : undo_.index();
    return restoredUnsaved_ || whatIfUnsaved_ || shownIndex != undo_.cleanIndex();
}

void ScheduleDocument::noteModified() {
    const bool modified = isModified();
    if (modified == modifiedShown_) return;
    modifiedShown_ = modified;
    emit modifiedChanged(modified);
}

bool ScheduleDocument::saveAs(const QString& path, QString* error) {
    // What is saved is what is shown: an undo still computing would leave the stack's clean
    // mark on a state the file does not hold.
    if (pending_ && pending_->kind == Pending::Kind::Stack) cancelComputation();
    auto written = saveSchedule(path.toStdString(), *stateToWrite(), current().ok ? &current().plan : nullptr);
    if (!written) {
        *error = QString::fromStdString(written.error().message);
        return false;
    }
    if (path_ != path) {
        path_ = path;
        emit pathChanged(path_);
    }
    restoredUnsaved_ = false;
    // A plan file has no place for them: they stay unsaved until a config holds them.
    if (state_->config) whatIfUnsaved_ = false;
    undo_.setClean();
    noteModified();
    emit statusMessage(tr("Saved %1").arg(QFileInfo(path).fileName()));
    return true;
}

views::TimeBase ScheduleDocument::timeBase() const {
    // A plan file records it (PlanInfo::unit_costs): a unit-cost plan reopened is still in units.
    const bool unit = (state_->config && state_->config->unit_costs) || state_->source.info.unit_costs;
    return unit ? views::TimeBase::Units : views::TimeBase::Milliseconds;
}

bool ScheduleDocument::canSaveInPlace() const {
    return !path_.isEmpty() && !AutosaveFile::isAutosavePath(path_) && !saveRefusal(path_.toStdString(), *state_);
}

QString ScheduleDocument::dropRefusal(int device, int programIndex, double dropTimeMs) {
    const ComputedSchedule& s = current();
    if (!s.ok) return tr("no schedule");
    if (device < 0 || device >= static_cast<int>(s.plan.devices.size())) return tr("no such device");
    const int insertion = dropInsertionIndex(s.plan, s.result, device, programIndex, dropTimeMs);
    const QString key = QStringLiteral("%1/%2/%3").arg(device).arg(programIndex).arg(insertion);
    if (auto known = dropAnswers_.constFind(key); known != dropAnswers_.constEnd()) return *known;
    auto edit = editForDrop(s.plan, s.result, device, programIndex, dropTimeMs);
    const QString reason = edit ? QString() : QString::fromStdString(edit.error().message);
    dropAnswers_.insert(key, reason);
    return reason;
}

ScheduleInput ScheduleDocument::base() const {
    return pending_ && pending_->kind == Pending::Kind::Change ? *pending_->target : *state_;
}

void ScheduleDocument::setPassEnabled(PassId pass, bool enabled) {
    std::vector<PassId> passes = base().passes;
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
    ScheduleInput next = base();
    next.passes = passes;
    change(std::move(next), pending_ && pending_->kind == Pending::Kind::Change && pending_->generate, description);
}

bool ScheduleDocument::setConfig(const Config& config, QString* error) {
    return openTuned(config, base().passes, PassEffort{}, tr("Change settings"), error);
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
    ScheduleInput next = base();
    next.config = config;
    next.source = Plan{};  // generated from the config on the worker (1.7 s at 1.8M instructions)
    next.passes = passes;
    next.effort = effort;
    // Edits name instructions, not positions: they are replayed on the new schedule, and any
    // that no longer apply are set aside with a notice (editsSetAside); undo brings them back.
    failure_.clear();
    change(std::move(next), true, description);
    if (!failure_.isEmpty()) {  // synchronous: the plan could not be generated
        *error = failure_;
        return false;
    }
    return true;
}

bool ScheduleDocument::requestMove(int device, int programIndex, double dropTimeMs, QString* reason) {
    const ComputedSchedule& s = current();
    if (!s.ok) return false;
    auto edit = editForDrop(s.plan, s.result, device, programIndex, dropTimeMs);
    if (!edit) {
        *reason = QString::fromStdString(edit.error().message);
        emit statusMessage(*reason);
        return false;
    }
    if (!*edit) {  // dropped where it was: said, so that a drop that changed nothing is not a mystery
        emit statusMessage(
            tr("%1 on device %2 is already there: the drop leaves the schedule as it was")
                .arg(QString::fromStdString(toActionString(s.plan.devices[device].program[programIndex])))
                .arg(device));
        return true;
    }
    // The drag was on the schedule shown: a change still computing gives way to it.
    if (pending_) cancelComputation();
    ScheduleInput next = *state_;
    next.edits.push_back(**edit);
    change(std::move(next), false,
           tr("Move %1 on device %2").arg(QString::fromStdString(toActionString((*edit)->moved))).arg(device));
    return true;
}

void ScheduleDocument::change(ScheduleInput next, bool generate, const QString& description) {
    const bool merged = pending_ && pending_->kind == Pending::Kind::Change;
    const QString name = merged && pending_->description != description
                             ? tr("%1, %2").arg(pending_->description, description)
                             : description;
    if (!generate) {
        const quint64 key = scheduleFingerprint(next);  // 15 ms at 1.8M instructions
        if (shown_ && key == shown_->fingerprint) {     // back to what is shown: nothing to do
            if (pending_) cancelComputation();
            return;
        }
        if (SharedShown known = cached(key)) {
            dropPending();
            pushShown(known, name);
            return;
        }
    }
    auto target = std::make_shared<const ScheduleInput>(std::move(next));
    Pending pending{Pending::Kind::Change, target, generate, name, 0};
    start(std::move(pending), ScheduleJob::compute(target, generate));
}

void ScheduleDocument::undo() {
    if (pending_ && pending_->kind == Pending::Kind::Change) return cancelComputation();  // not in the history yet
    undo_.undo();
}

void ScheduleDocument::redo() {
    if (pending_ && pending_->kind == Pending::Kind::Change) cancelComputation();
    undo_.redo();
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
    if (autosave_) autosave_->save(stateToWrite(), path_);
}

SharedInput ScheduleDocument::stateToWrite() const {
    if (!state_->config || state_->config->what_if == whatIf_) return state_;
    auto copy = std::make_shared<ScheduleInput>(*state_);
    copy->config->what_if = whatIf_;
    return copy;
}

void ScheduleDocument::setWhatIf(const WhatIfSection& settings) {
    if (whatIf_ == settings) return;
    whatIf_ = settings;
    whatIfUnsaved_ = true;
    noteModified();
    writeAutosave();
}

}  // namespace mario::gui
