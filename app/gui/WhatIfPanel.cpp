#include "app/gui/WhatIfPanel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/gui/ChartExport.h"
#include "app/gui/ScheduleDocument.h"
#include "app/gui/SweepJob.h"
#include "core/io/TextFile.h"
#include "core/sweep/SweepExport.h"
#include "core/sweep/SweepKnob.h"
#include "views/WhatIfChart.h"

namespace mario::gui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

// The knob picker: every knob of core's one list (SweepKnob.h), its line as the tooltip.
void fillKnobs(QComboBox* box, bool optional) {
    if (optional) box->addItem(QObject::tr("(none)"), QString());
    for (const SweepKnob& knob : sweepKnobs()) {
        const QString key = qstr(std::string(knob.key));
        box->addItem(key, key);
        box->setItemData(box->count() - 1, qstr(std::string(knob.about)), Qt::ToolTipRole);
    }
}

}  // namespace

WhatIfPanel::WhatIfPanel(ScheduleDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), chart_(new views::WhatIfChart(this)), job_(new SweepJob(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildInputs());
    layout->addWidget(chart_, 1);
    connect(job_, &SweepJob::progressed, this, [this](int done, int total) {
        progress_->setMaximum(std::max(total, 1));
        progress_->setValue(done);
        setStatus(tr("Sweeping: %1 of %2 points").arg(done).arg(total));
    });
    connect(job_, &SweepJob::finished, this, &WhatIfPanel::onFinished);
    connect(chart_, &views::WhatIfChart::pointClicked, this, &WhatIfPanel::openPoint);
    connect(document_, &ScheduleDocument::computed, this, &WhatIfPanel::syncWithDocument);
    // The fields are kept with the document (saved in the config, autosaved); a file that
    // brings its own fills them, one without leaves them as the user left them.
    connect(this, &WhatIfPanel::settingsEdited, this, [this] { document_->setWhatIf(toSection(settings())); });
    connect(document_, &ScheduleDocument::whatIfLoaded, this, [this] {
        if (document_->whatIf()) applySettings(fromSection(*document_->whatIf()));
    });
    syncWithDocument();
}

WhatIfPanel::~WhatIfPanel() = default;  // the job cancels and waits in its own destructor

QWidget* WhatIfPanel::buildInputs() {
    auto* inputs = new QWidget(this);
    auto* form = new QFormLayout(inputs);
    form->setContentsMargins(0, 0, 0, 0);
    // A knob picker and its values field, on one row.
    auto knobRow = [&](const QString& label, const QString& name, bool optional, QComboBox*& box, QLineEdit*& edit) {
        box = new QComboBox(inputs);
        box->setObjectName(name);
        fillKnobs(box, optional);
        edit = new QLineEdit(inputs);
        edit->setObjectName(name + "Values");
        auto* row = new QHBoxLayout;
        row->addWidget(box);
        row->addWidget(edit, 1);
        form->addRow(label, row);
    };
    knobRow(tr("vary"), "whatIfKnob", false, knob_, values_);
    values_->setPlaceholderText(tr("1,2,4,8 or 1:16 or 1:16:2"));
    values_->setToolTip(tr("The values, as mario sweep --vary reads them: a list (1,2,4,8), a range MIN:MAX "
                           "(every whole number) or MIN:MAX:STEP"));
    knobRow(tr("and"), "whatIfKnob2", true, knob2_, values2_);
    values2_->setPlaceholderText(tr("values of a second knob (optional)"));
    schemes_ = new QLineEdit(inputs);
    schemes_->setObjectName("whatIfSchemes");
    schemes_->setPlaceholderText(tr("the config's scheme; or 1f1b,chimera,interleaved:2"));
    form->addRow(tr("schemes"), schemes_);
    passSets_ = new QLineEdit(inputs);
    passSets_->setObjectName("whatIfPassSets");
    passSets_->setPlaceholderText(tr("the config's passes; or none;all;checkpoint,overlap"));
    passSets_->setToolTip(tr("Pass sets separated by ';', each as --passes reads it: one line per scheme and pass set"));
    form->addRow(tr("pass sets"), passSets_);

    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(tr("Run"), inputs);
    run_->setObjectName("whatIfRun");
    cancel_ = new QPushButton(tr("Cancel"), inputs);
    cancel_->setObjectName("whatIfCancel");
    cancel_->setEnabled(false);
    export_ = new QPushButton(tr("Export…"), inputs);
    export_->setObjectName("whatIfExport");
    export_->setEnabled(false);
    metric_ = new QComboBox(inputs);
    metric_->setObjectName("whatIfMetric");
    metric_->addItem(tr("throughput"), QStringLiteral("throughput"));
    metric_->addItem(tr("step time"), QStringLiteral("step"));
    slice_ = new QComboBox(inputs);
    slice_->setObjectName("whatIfSlice");
    slice_->setToolTip(tr("With two knobs the lines run along the first, at this value of the second"));
    slice_->hide();
    progress_ = new QProgressBar(inputs);
    progress_->setVisible(false);
    auto* shown = new QHBoxLayout;
    shown->addWidget(metric_);
    shown->addWidget(slice_, 1);
    form->addRow(tr("chart"), shown);
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    buttons->addWidget(progress_, 1);
    buttons->addWidget(export_);
    form->addRow(buttons);
    status_ = new QLabel(inputs);
    status_->setObjectName("whatIfStatus");
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(status_);

    connect(run_, &QPushButton::clicked, this, &WhatIfPanel::run);
    connect(cancel_, &QPushButton::clicked, this, &WhatIfPanel::cancel);
    connect(export_, &QPushButton::clicked, this, &WhatIfPanel::exportAsked);
    for (QLineEdit* edit : {values_, values2_, schemes_, passSets_}) {
        connect(edit, &QLineEdit::returnPressed, this, &WhatIfPanel::run);
        connect(edit, &QLineEdit::textEdited, this, &WhatIfPanel::settingsEdited);
    }
    for (QComboBox* box : {knob_, knob2_, metric_})
        connect(box, &QComboBox::activated, this, &WhatIfPanel::settingsEdited);
    connect(metric_, &QComboBox::currentIndexChanged, this, [this] {
        chart_->setTopMetric(metric_->currentData().toString() == "step" ? SweepMetric::Step
                                                                         : SweepMetric::Throughput);
    });
    connect(slice_, &QComboBox::currentIndexChanged, this, &WhatIfPanel::showSlice);
    return inputs;
}

WhatIfSettings WhatIfPanel::settings() const {
    WhatIfSettings s;
    s.knob = knob_->currentData().toString();
    s.values = values_->text();
    s.knob2 = knob2_->currentData().toString();
    s.values2 = values2_->text();
    s.schemes = schemes_->text();
    s.passSets = passSets_->text();
    s.metric = metric_->currentData().toString();
    return s;
}

void WhatIfPanel::applySettings(const WhatIfSettings& s) {
    // An unknown key (a file from a later version) leaves the picker where it was.
    if (const int i = knob_->findData(s.knob); i >= 0) knob_->setCurrentIndex(i);
    values_->setText(s.values);
    knob2_->setCurrentIndex(std::max(0, knob2_->findData(s.knob2)));
    values2_->setText(s.values2);
    schemes_->setText(s.schemes);
    passSets_->setText(s.passSets);
    metric_->setCurrentIndex(std::max(0, metric_->findData(s.metric)));
    filledFromDocument_ = true;
}

void WhatIfPanel::syncWithDocument() {
    const bool config = document_->state().config.has_value();
    run_->setEnabled(config && !isRunning());
    run_->setToolTip(config ? QString() : tr("A sweep varies a config: open a *.config.json (a plan has none)"));
    // The first config seen fills the fields once; afterwards they are the user's.
    if (config && !filledFromDocument_)
        applySettings(document_->whatIf() ? fromSection(*document_->whatIf()) : WhatIfSettings{});
}

Result<SweepSpec> WhatIfPanel::spec() const {
    if (!document_->state().config) return makeError("a sweep varies a config: open a *.config.json (a plan has none)");
    SweepSpec spec;
    spec.base = *document_->state().config;
    const WhatIfSettings s = settings();
    for (const auto& [key, values] : {std::pair(s.knob, s.values), std::pair(s.knob2, s.values2)}) {
        if (key.isEmpty()) continue;
        // The CLI's own reader: "KEY=VALUES", so both refuse the same text with the same line.
        auto range = parseVary((key + "=" + values.trimmed()).toStdString());
        if (!range) return range.error();
        spec.knobs.push_back(std::move(*range));
    }
    if (!s.schemes.trimmed().isEmpty()) {
        auto schemes = parseSchemeChoices(s.schemes.trimmed().toStdString());
        if (!schemes) return makeError("schemes: " + schemes.error().message);
        spec.schemes = std::move(*schemes);
    }
    if (!s.passSets.trimmed().isEmpty()) {
        auto sets = parsePassSets(s.passSets.trimmed().toStdString());
        if (!sets) return makeError("pass sets: " + sets.error().message);
        spec.pass_sets = std::move(*sets);
    }
    if (auto count = checkSweepSpec(spec); !count) return count.error();
    return spec;
}

bool WhatIfPanel::isRunning() const { return job_->isRunning(); }

bool WhatIfPanel::run() {
    if (isRunning()) return false;
    auto sweep = spec();
    if (!sweep) {
        setStatus(qstr(sweep.error().message), true);
        return false;
    }
    setRunning(true);
    progress_->setMaximum(std::max(*checkSweepSpec(*sweep), 1));
    progress_->setValue(0);
    setStatus(tr("Sweeping %1 points…").arg(progress_->maximum()));
    job_->start(*sweep);
    return true;
}

void WhatIfPanel::cancel() {
    if (!isRunning()) return;
    job_->cancel();
    setStatus(tr("Cancelling…"));
}

void WhatIfPanel::setRunning(bool running) {
    run_->setEnabled(!running && document_->state().config.has_value());
    cancel_->setEnabled(running);
    progress_->setVisible(running);
}

void WhatIfPanel::setStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
}

QString WhatIfPanel::statusText() const { return status_->text(); }

void WhatIfPanel::onFinished() {
    setRunning(false);
    if (!job_->result()) {
        setStatus(qstr(job_->error()), true);
        emit finished();
        return;
    }
    result_ = job_->result();
    int ran = 0, refused = 0;
    for (const SweepPoint& point : result_->points) {
        ran += point.ok();
        refused += point.evaluated && !point.refusal.empty();
    }
    QStringList said;
    said << tr("%1 of %2 points simulated in %3 s on %4 threads")
                .arg(ran)
                .arg(result_->points.size())
                .arg(result_->elapsed_ms / 1000, 0, 'f', 2)
                .arg(result_->threads);
    if (refused > 0) said << tr("%1 refused (crosses: hover for why)").arg(refused);
    if (result_->cancelled) said << tr("cancelled: the rest not run");
    said << tr("click a point to open it");
    setStatus(said.join(QStringLiteral("; ")) + QLatin1Char('.'));
    // With two knobs, the second's values to choose from.
    const QSignalBlocker blocker(slice_);
    slice_->clear();
    if (result_->spec.knobs.size() > 1)
        for (const KnobValue& value : result_->spec.knobs[1].values)
            slice_->addItem(QStringLiteral("%1 = %2").arg(qstr(std::string(result_->spec.knobs[1].knob->key)),
                                                          qstr(value.text())));
    slice_->setVisible(slice_->count() > 0);
    export_->setEnabled(true);
    showSlice();
    emit finished();
}

void WhatIfPanel::showSlice() {
    if (!result_) return;
    chart_->setLines(views::whatIfLines(result_, std::max(0, slice_->currentIndex())));
}

bool WhatIfPanel::openPoint(int index) {
    if (!result_ || index < 0 || index >= static_cast<int>(result_->points.size())) return false;
    const SweepPoint& point = result_->points[static_cast<std::size_t>(index)];
    const QString what = chart_->describe(index).section(QLatin1Char(':'), 0, 0);
    if (!point.ok() || !point.config) {
        setStatus(tr("%1 cannot be opened: %2").arg(what, point.refusal.empty() ? tr("it did not run")
                                                                                : qstr(point.refusal)),
                  true);
        return false;
    }
    // The config the point was simulated from and the passes it ran, default effort: exactly
    // what `mario simulate` of that config computes, as one undo step.
    QString error;
    if (!document_->openTuned(*point.config, point.passes, PassEffort{}, tr("Open what-if point %1").arg(what),
                              &error)) {
        setStatus(tr("Cannot open %1: %2").arg(what, error), true);
        return false;
    }
    setStatus(tr("Opened %1 in the main view (Ctrl+Z goes back).").arg(what));
    return true;
}

bool WhatIfPanel::exportTo(const QString& path) {
    const QString lower = path.toLower();
    QString error;
    bool ok = false;
    if (!result_) {
        error = tr("nothing to export yet: run a sweep first");
    } else if (lower.endsWith(".csv")) {
        // The rows of `mario sweep --csv` (core/sweep/SweepExport.h), through core's one writer.
        auto written = writeTextFile(path.toStdString(), sweepCsv(*result_), "the sweep CSV");
        if (!written) error = qstr(written.error().message);
        ok = written.ok();
    } else if (lower.endsWith(".png") || lower.endsWith(".svg") || lower.endsWith(".pdf")) {
        ok = exportChartImage(path, chart_, tr("What-if: %1").arg(chart_->lines().knob), &error);
    } else {
        error = path + tr(": unknown export format (use .png, .svg, .pdf or .csv)");
    }
    setStatus(ok ? tr("Exported %1").arg(path) : error, !ok);
    return ok;
}

void WhatIfPanel::exportAsked() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export the sweep"), QString(),
                                                      tr("Charts (*.png *.svg *.pdf);;Points (*.csv)"));
    if (!path.isEmpty()) exportTo(path);
}

}  // namespace mario::gui
