#pragma once
// The What-if view (Tools → What-if, issue 41): sweeps one knob of the open config (and
// optionally a second) over values typed as `mario sweep --vary` reads them, for the schemes
// and pass sets to compare, on a background job with progress and Cancel, and draws step or
// throughput, MFU and peak memory against the knob (views/WhatIfChart.h). Clicking a point
// opens that configuration in the main window as one undo step, as the tuner's double-click
// does; Export writes the charts (PNG, SVG, PDF) or the points (CSV, as `mario sweep --csv`).
#include <QWidget>
#include <memory>

#include "app/gui/WhatIfSettings.h"
#include "core/sweep/Sweep.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace mario::views {
class WhatIfChart;
}

namespace mario::gui {

class ScheduleDocument;
class SweepJob;

class WhatIfPanel : public QWidget {
    Q_OBJECT
public:
    explicit WhatIfPanel(ScheduleDocument* document, QWidget* parent = nullptr);
    ~WhatIfPanel() override;

    // The fields as text (what is saved with the document), and back.
    WhatIfSettings settings() const;
    void applySettings(const WhatIfSettings& settings);
    // The sweep the fields describe, from the document's config, or one line saying which
    // field is wrong (the CLI's words: the same parsers).
    Result<SweepSpec> spec() const;
    bool isRunning() const;
    std::shared_ptr<const SweepResult> result() const { return result_; }
    QString statusText() const;

    QComboBox* knobBox() const { return knob_; }
    QLineEdit* valuesEdit() const { return values_; }
    QComboBox* secondKnobBox() const { return knob2_; }
    QLineEdit* secondValuesEdit() const { return values2_; }
    QLineEdit* schemesEdit() const { return schemes_; }
    QLineEdit* passSetsEdit() const { return passSets_; }
    QComboBox* metricBox() const { return metric_; }
    QComboBox* sliceBox() const { return slice_; }
    QPushButton* runButton() const { return run_; }
    QPushButton* cancelButton() const { return cancel_; }
    QPushButton* exportButton() const { return export_; }
    QProgressBar* progressBar() const { return progress_; }
    views::WhatIfChart* chart() const { return chart_; }

public slots:
    // Starts the sweep; false (the status says why) when it cannot start.
    bool run();
    void cancel();
    // Opens result()->points[index] in the main window (one undo step); false, with the
    // reason in the status, for a refused point or one the document cannot build.
    bool openPoint(int index);
    // PNG, SVG or PDF of the charts, or CSV of the points, by extension; false with the reason.
    bool exportTo(const QString& path);

signals:
    void finished();
    // The fields changed (the document saves them).
    void settingsEdited();

private:
    QWidget* buildInputs();
    void setRunning(bool running);
    void setStatus(const QString& text, bool error = false);
    void onFinished();
    void showSlice();
    void syncWithDocument();
    void exportAsked();

    ScheduleDocument* document_;
    QComboBox *knob_, *knob2_, *metric_, *slice_;
    QLineEdit *values_, *values2_, *schemes_, *passSets_;
    QPushButton *run_, *cancel_, *export_;
    QProgressBar* progress_;
    QLabel* status_;
    views::WhatIfChart* chart_;
    SweepJob* job_;
    std::shared_ptr<const SweepResult> result_;
    bool filledFromDocument_ = false;
};

}  // namespace mario::gui
