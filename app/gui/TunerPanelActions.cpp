// The tuner's actions on one candidate (TunerPanel.h): select it, open its schedule in the
// main window, or export it for a cluster. Apart from the panel's layout and run loop so
// that each file stays readable.
#include <QFileDialog>
#include <QPushButton>
#include <QTableView>

#include "app/gui/ScheduleDocument.h"
#include "app/gui/TuneResultModel.h"
#include "app/gui/TuneResultSortProxy.h"
#include "app/gui/TunerPanel.h"
#include "core/passes/PassVocabulary.h"
#include "core/tune/CandidateExport.h"
#include "core/tune/Tuner.h"

namespace mario::gui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

void TunerPanel::selectOutcomeInTable(int outcome) {
    const int row = model_->rowOf(outcome);
    if (row < 0) return;
    const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    table_->selectRow(index.row());
    table_->scrollTo(index);
}

bool TunerPanel::openCandidate(int outcome) {
    const TuneOutcome* o = result_ && runBase_ ? model_->outcome(outcome) : nullptr;
    if (!o) return false;
    if (!o->feasible) {
        setStatus(tr("%1 does not fit; only candidates that fit open as schedules.").arg(qstr(o->candidate.label())),
                  true);
        return false;
    }
    const Config config = Tuner::configFor(*runBase_, o->candidate, runOptions_);
    const QString label = qstr(o->candidate.label());
    // Exactly the passes the row was measured with (bound-w and hide included where the tuner
    // ran them), with the tuner's effort caps, so the window shows the step and peak the
    // table ranked: one undo step, refused whole when the config cannot be built.
    const std::vector<PassId> passes = o->passes;
    QString error;
    if (!document_->openTuned(config, passes, Tuner::passEffort(runOptions_), tr("Open tuned candidate %1").arg(label),
                              &error)) {
        setStatus(tr("Cannot open %1: %2").arg(label, error), true);
        return false;
    }
    QStringList names;
    for (const std::string& name : passNames(passes)) names << qstr(name);
    setStatus(tr("Opened %1 in the main window with passes %2.")
                  .arg(label, names.isEmpty() ? tr("none") : names.join(QStringLiteral(","))));
    if (QWidget* window = parentWidget() ? parentWidget()->window() : nullptr) {
        window->raise();
        window->activateWindow();
    }
    return true;
}

bool TunerPanel::exportCandidate(int outcome, const QString& directory) {
    const TuneOutcome* o = result_ && runBase_ ? model_->outcome(outcome) : nullptr;
    if (!o) return false;
    const QString label = qstr(o->candidate.label());
    if (!o->feasible) {
        setStatus(tr("%1 does not fit; only candidates that fit can be exported.").arg(label), true);
        return false;
    }
    // The candidate as it was tuned: the run's base config and options, not the document's
    // current state, which may have moved on since.
    auto written = writeCandidateBundle(directory.toStdString(), *runBase_, o->candidate, runOptions_);
    if (!written) {
        setStatus(tr("Cannot export %1: %2").arg(label, qstr(written.error().message)), true);
        return false;
    }
    setStatus(tr("Exported %1 to %2 (%3).").arg(label, directory, qstr(*written)));
    return true;
}

void TunerPanel::exportSelected() {
    const QModelIndex current = table_->currentIndex();
    if (!current.isValid()) return;
    const QString directory = QFileDialog::getExistingDirectory(this, tr("Export the candidate into a folder"));
    if (directory.isEmpty()) return;  // cancelled
    exportCandidate(proxy_->outcomeAt(current.row()), directory);
}

}  // namespace mario::gui
