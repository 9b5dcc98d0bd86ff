#pragma once
// The schedule tuner window (issue 4): tunes the open config (scheme × PP × DP × TP ×
// micro-batch size × checkpointing under a memory limit) on a background thread, with a live
// best-so-far curve, cancel, a sortable ranked table, the Pareto scatter and a summary. A
// double-click on a feasible row opens that candidate's schedule in the main window (one undo
// step), and "Export for cluster…" writes its launch bundle. Plan files and teaching (unit-cost) configs cannot be tuned: the panel says why.
#include <QPointF>
#include <QVector>
#include <QWidget>
#include <optional>
#include <utility>
#include <vector>

#include "core/model/Config.h"
#include "core/tune/TuneTypes.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

namespace mario::views {
class ParetoChart;
class TunerCurveChart;
}  // namespace mario::views

namespace mario::gui {

class ScheduleDocument;
class TuneJob;
class TuneResultModel;
class TuneResultSortProxy;

class TunerPanel : public QWidget {
    Q_OBJECT
public:
    explicit TunerPanel(ScheduleDocument* document, QWidget* parent = nullptr);
    ~TunerPanel() override;

    // What Run would search, from the inputs (the config's own parallel settings are ignored).
    TuneOptions options() const;
    // A config with analytical costs is open (plan files and unit costs cannot be tuned).
    bool canTune() const;
    bool isRunning() const;
    // The last finished run (also a cancelled one, with what it had evaluated).
    const std::optional<TuneResult>& result() const { return result_; }
    const std::optional<Config>& resultBase() const { return runBase_; }

    QString statusText() const;
    QString summaryText() const;  // plain text
    QString noteText() const;     // why the panel is disabled; empty when it is not

    QPushButton* runButton() const { return run_; }
    QPushButton* cancelButton() const { return cancel_; }
    QPushButton* exportButton() const { return export_; }
    QSpinBox* devicesBox() const { return devices_; }
    QDoubleSpinBox* memoryBox() const { return memory_; }
    QCheckBox* tensorParallelBox() const { return tpSearch_; }
    QSpinBox* threadsBox() const { return threads_; }
    QCheckBox* showRejectedBox() const { return showRejected_; }
    QProgressBar* progressBar() const { return progress_; }
    QTableView* table() const { return table_; }
    TuneResultModel* model() const { return model_; }
    TuneResultSortProxy* proxy() const { return proxy_; }
    views::TunerCurveChart* curve() const { return curve_; }
    views::ParetoChart* pareto() const { return pareto_; }

public slots:
    // Starts a search; false (the status says why) when none can start.
    bool run();
    void cancel();
    // Loads the candidate behind result()->outcomes[outcome] into the document; false (the
    // status says why) for a rejected candidate or when its schedule cannot be built.
    bool openCandidate(int outcome);
    // Writes that candidate's launch bundle (core/tune/CandidateExport.h) into `directory`, as
    // `mario tune --export` does; false (the status says why) for a rejected candidate or a
    // bundle that cannot be written. "Export for cluster…" asks for the folder and calls this.
    bool exportCandidate(int outcome, const QString& directory);

signals:
    void started();
    // The run ended (done, cancelled or failed) and table, charts and summary show it.
    void finished();

private:
    QWidget* buildInputs();
    void syncWithDocument();
    void resetInputs(const Config& config);
    void setRunning(bool running);
    void setStatus(const QString& text, bool error = false);
    void showProgress(const QVector<QPointF>& improvements, const TuneProgress& latest);
    void onFinished();
    void selectOutcomeInTable(int outcome);
    void exportSelected();

    ScheduleDocument* document_;
    QWidget* inputs_;
    QSpinBox* devices_;
    QDoubleSpinBox* memory_;
    QCheckBox* tpSearch_;
    QSpinBox* threads_;
    std::vector<std::pair<Scheme, QCheckBox*>> schemeBoxes_;  // one per scheme in the catalog
    QPushButton *run_, *cancel_, *export_;
    QProgressBar* progress_;
    int candidates_ = 0;  // the search space of the current run (refinement counted apart)
    QLabel *status_, *note_, *summary_;
    QCheckBox* showRejected_;
    QTableView* table_;
    TuneResultModel* model_;
    TuneResultSortProxy* proxy_;
    views::TunerCurveChart* curve_;
    views::ParetoChart* pareto_;

    TuneJob* job_;
    std::optional<TuneResult> result_;
    std::optional<Config> runBase_;  // what the shown result was searched from
    TuneOptions runOptions_;
    QString inputsKey_;  // the config the inputs were last filled from
};

}  // namespace mario::gui
