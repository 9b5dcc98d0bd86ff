#include "app/gui/TunerPanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTextDocument>
#include <QVBoxLayout>
#include <algorithm>

#include "app/gui/ScheduleDocument.h"
#include "app/gui/TuneJob.h"
#include "app/gui/TuneResultModel.h"
#include "app/gui/TuneResultSortProxy.h"
#include "app/gui/TuneSummary.h"
#include "core/passes/PassRegistry.h"
#include "core/passes/PassVocabulary.h"
#include "core/tune/Tuner.h"
#include "views/ParetoChart.h"
#include "views/TunerCurveChart.h"

namespace mario::gui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

TunerPanel::TunerPanel(ScheduleDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    setWindowTitle(tr("Schedule tuner"));
    job_ = new TuneJob(this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildInputs());

    note_ = new QLabel(this);
    note_->setObjectName("tunerNote");
    note_->setWordWrap(true);
    note_->setStyleSheet("QLabel { background: #fff4ce; color: #5c4400; padding: 6px; }");
    layout->addWidget(note_);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    auto* charts = new QSplitter(Qt::Horizontal, splitter);
    curve_ = new views::TunerCurveChart(charts);
    pareto_ = new views::ParetoChart(charts);
    auto* results = new QWidget(splitter);
    auto* resultsLayout = new QVBoxLayout(results);
    resultsLayout->setContentsMargins(0, 0, 0, 0);
    auto* summaryRow = new QHBoxLayout;
    summary_ = new QLabel(results);
    summary_->setObjectName("tunerSummary");
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    showRejected_ = new QCheckBox(tr("show rejected"), results);
    export_ = new QPushButton(tr("Export for cluster…"), results);
    export_->setToolTip(tr("Write the selected candidate's plan, Megatron-LM arguments and torchrun and Slurm "
                           "scripts into a folder"));
    export_->setEnabled(false);
    summaryRow->addWidget(summary_, 1);
    summaryRow->addWidget(showRejected_, 0, Qt::AlignTop);
    summaryRow->addWidget(export_, 0, Qt::AlignTop);
    model_ = new TuneResultModel(this);
    proxy_ = new TuneResultSortProxy(this);
    proxy_->setSourceModel(model_);
    table_ = new QTableView(results);
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(TuneResultModel::Rank, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setToolTip(tr("Double-click a candidate that fits to open its schedule in the main window"));
    resultsLayout->addLayout(summaryRow);
    resultsLayout->addWidget(table_, 1);
    charts->setMinimumHeight(240);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({420, 400});
    layout->addWidget(splitter, 1);

    connect(job_, &TuneJob::progressed, this, &TunerPanel::showProgress);
    connect(job_, &TuneJob::finished, this, &TunerPanel::onFinished);
    connect(showRejected_, &QCheckBox::toggled, model_, &TuneResultModel::setShowRejected);
    connect(table_, &QTableView::doubleClicked, this,
            [this](const QModelIndex& index) { openCandidate(proxy_->outcomeAt(index.row())); });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                const int outcome = current.isValid() ? proxy_->outcomeAt(current.row()) : -1;
                pareto_->setSelected(outcome >= 0 ? std::optional<int>(outcome) : std::nullopt);
                const TuneOutcome* chosen = outcome >= 0 ? model_->outcome(outcome) : nullptr;
                export_->setEnabled(chosen && chosen->feasible);
            });
    connect(export_, &QPushButton::clicked, this, &TunerPanel::exportSelected);
    connect(pareto_, &views::ParetoChart::candidateClicked, this, &TunerPanel::selectOutcomeInTable);
    connect(document_, &ScheduleDocument::computed, this, &TunerPanel::syncWithDocument);
    setRunning(false);
    syncWithDocument();
    resize(1200, 860);
}

TunerPanel::~TunerPanel() = default;  // the job cancels and waits for its search

bool TunerPanel::isRunning() const { return job_->isRunning(); }

QWidget* TunerPanel::buildInputs() {
    inputs_ = new QGroupBox(tr("Search"), this);
    auto* grid = new QGridLayout(inputs_);
    devices_ = new QSpinBox(inputs_);
    devices_->setRange(2, 1 << 16);
    devices_->setToolTip(tr("GPUs to spread over pipeline, data and tensor parallelism"));
    memory_ = new QDoubleSpinBox(inputs_);
    memory_->setRange(0, 100000);
    memory_->setDecimals(1);
    memory_->setSuffix(tr(" GB"));
    memory_->setSpecialValueText(tr("device memory"));
    memory_->setToolTip(tr("Every device's predicted peak must stay within this"));
    threads_ = new QSpinBox(inputs_);
    threads_->setRange(0, 256);
    threads_->setSpecialValueText(tr("auto"));
    QStringList degrees;
    for (int tp : tensorParallelWithinNode()) degrees << QString::number(tp);
    tpSearch_ = new QCheckBox(tr("search TP ∈ {%1}").arg(degrees.join(", ")), inputs_);
    tpSearch_->setToolTip(tr("Off: tensor parallelism stays 1"));
    // One box per scheme, six to a row; the chunked ones search v = 2 and 4.
    auto* schemes = new QGridLayout;
    for (const SchemeInfo& scheme : schemeCatalog()) {
        QString label = QString::fromUtf8(scheme.name.data(), static_cast<int>(scheme.name.size()));
        if (scheme.chunked) label += tr(" (v = 2, 4)");
        auto* box = new QCheckBox(label, inputs_);
        box->setToolTip(QString::fromUtf8(scheme.description.data(), static_cast<int>(scheme.description.size())));
        box->setChecked(true);
        const int index = static_cast<int>(schemeBoxes_.size());
        schemes->addWidget(box, index / 6, index % 6);
        schemeBoxes_.push_back({scheme.scheme, box});
    }

    run_ = new QPushButton(tr("Run"), this);
    run_->setDefault(true);
    cancel_ = new QPushButton(tr("Cancel"), this);
    progress_ = new QProgressBar(this);
    progress_->setFormat(tr("%v / %m candidates"));
    progress_->setMinimumWidth(240);
    status_ = new QLabel(this);
    status_->setObjectName("tunerStatus");
    connect(run_, &QPushButton::clicked, this, [this] { run(); });
    connect(cancel_, &QPushButton::clicked, this, &TunerPanel::cancel);

    grid->addWidget(new QLabel(tr("devices"), inputs_), 0, 0);
    grid->addWidget(devices_, 0, 1);
    grid->addWidget(new QLabel(tr("memory limit"), inputs_), 0, 2);
    grid->addWidget(memory_, 0, 3);
    grid->addWidget(new QLabel(tr("threads"), inputs_), 0, 4);
    grid->addWidget(threads_, 0, 5);
    grid->addWidget(tpSearch_, 0, 6);
    grid->addWidget(new QLabel(tr("schemes"), inputs_), 1, 0);
    grid->addLayout(schemes, 1, 1, 1, 6);
    grid->setColumnStretch(7, 1);

    // Run/Cancel and the progress stay outside the group so that disabling the inputs while
    // a search runs leaves Cancel usable.
    auto* box = new QWidget(this);
    auto* column = new QVBoxLayout(box);
    column->setContentsMargins(0, 0, 0, 0);
    auto* controls = new QHBoxLayout;
    controls->addWidget(run_);
    controls->addWidget(cancel_);
    controls->addWidget(progress_, 1);
    controls->addWidget(status_, 2);
    column->addWidget(inputs_);
    column->addLayout(controls);
    return box;
}

TuneOptions TunerPanel::options() const {
    TuneOptions options;
    options.devices = devices_->value();
    if (memory_->value() > 0) options.memory_limit_bytes = memory_->value() * 1e9;
    options.schemes.clear();
    for (const auto& [scheme, box] : schemeBoxes_)
        if (box->isChecked()) options.schemes.push_back(scheme);
    options.tensor_parallel = tpSearch_->isChecked() ? tensorParallelWithinNode() : std::vector<int>{1};
    options.threads = threads_->value();
    return options;
}

bool TunerPanel::canTune() const {
    const auto& config = document_->state().config;
    return config && !config->unit_costs;
}

QString TunerPanel::statusText() const { return status_->text(); }
QString TunerPanel::summaryText() const {
    QTextDocument text;
    text.setHtml(summary_->text());
    return text.toPlainText();
}
QString TunerPanel::noteText() const { return note_->isHidden() ? QString() : note_->text(); }

void TunerPanel::syncWithDocument() {
    const auto& config = document_->state().config;
    QString note;
    if (!config)
        note = tr("This schedule comes from a plan file, which fixes its own stages and costs: there is nothing to "
                  "tune. Open a config (*.config.json) to tune it.");
    else if (config->unit_costs)
        note = tr("Teaching (unit) costs have no real memory or throughput to tune for: switch the settings to "
                  "analytical costs first.");
    note_->setText(note);
    note_->setVisible(!note.isEmpty());
    setRunning(job_->isRunning());
    if (!config || config->unit_costs) return;
    // Refill the inputs only when the config they came from changed in what they derive from,
    // so values the user typed survive opening a candidate (which changes PP, DP, …).
    const ParallelConfig& p = config->parallel;
    const QString key = QStringLiteral("%1|%2|%3|%4|%5")
                            .arg(document_->path(), qstr(config->model.name), qstr(config->hardware.name))
                            .arg(config->memory_limit_bytes.value_or(0))
                            .arg(p.pp * p.dp * p.tp);
    if (key != inputsKey_) {
        inputsKey_ = key;
        resetInputs(*config);
    }
}

void TunerPanel::resetInputs(const Config& config) {
    const ParallelConfig& p = config.parallel;
    devices_->setValue(std::max(2, p.pp * p.dp * p.tp));
    memory_->setValue(config.memory_limit_bytes ? *config.memory_limit_bytes / 1e9 : config.hardware.memory_gb);
}

void TunerPanel::setRunning(bool running) {
    const bool available = canTune();
    inputs_->setEnabled(available && !running);
    run_->setEnabled(available && !running);
    cancel_->setEnabled(running);
}

void TunerPanel::setStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("QLabel { color: #8a0010; }") : QString());
}

bool TunerPanel::run() {
    if (job_->isRunning()) return false;
    if (!canTune()) {
        setStatus(note_->text(), true);
        return false;
    }
    const Config base = *document_->state().config;
    const TuneOptions options = this->options();
    if (options.schemes.empty()) {
        setStatus(tr("Choose at least one scheme."), true);
        return false;
    }
    if (auto checked = Tuner::checkOptions(base, options); !checked) {
        setStatus(qstr(checked.error().message), true);
        return false;
    }
    runBase_ = base;
    runOptions_ = options;
    result_.reset();
    export_->setEnabled(false);
    model_->clear();
    pareto_->clear();
    summary_->clear();
    const int total = static_cast<int>(Tuner::searchSpace(base, options).size());
    candidates_ = total;
    curve_->clear(total);
    progress_->setFormat(tr("%v / %m candidates"));
    progress_->setRange(0, std::max(total, 1));
    progress_->setValue(0);
    setStatus(total == 1 ? tr("Searching 1 candidate…") : tr("Searching %1 candidates…").arg(total));

    setRunning(true);
    job_->start(base, options);
    emit started();
    return true;
}

void TunerPanel::cancel() {
    if (!job_->isRunning()) return;
    job_->cancel();
    cancel_->setEnabled(false);
    setStatus(tr("Cancelling…"));
}

namespace {

// "checkpoint, overlap, …, hide": the pass table's refining column, named as the CLI names them.
std::string refiningPassNames() {
    std::string names;
    for (const std::string& name : passNames(tunerPasses(true))) names += (names.empty() ? "" : ", ") + name;
    return names;
}

}  // namespace

void TunerPanel::showProgress(const QVector<QPointF>& improvements, const TuneProgress& latest) {
    // The curve counts candidates, as the summary does: refining the best few again is no more
    // candidates, so its gains rise at the last one (the caption said "418 of 418" beside "410").
    for (const QPointF& p : improvements) curve_->addPoint(std::min(static_cast<int>(p.x()), candidates_), p.y());
    if (latest.evaluated > 0)  // extend the plateau
        curve_->addPoint(std::min(latest.evaluated, candidates_), latest.best_samples_per_s);
    // Two phases, counted apart so the numbers agree with the final "N candidates": the
    // screening of every candidate, then the best few again with every pass (refining).
    if (latest.refining) {
        progress_->setFormat(tr("refining the best: %v / %m"));
        progress_->setRange(0, std::max(latest.total - candidates_, 1));
        progress_->setValue(latest.evaluated - candidates_);
    } else {
        progress_->setValue(std::min(latest.evaluated, candidates_));
    }
    if (job_->isCancelling()) return;
    if (latest.refining)
        setStatus(tr("Re-evaluating the best %1 candidates with the passes %2…")
                      .arg(latest.total - candidates_)
                      .arg(QString::fromStdString(refiningPassNames())));
    else setStatus(tr("Evaluated %1 of %2 candidates…").arg(latest.evaluated).arg(candidates_));
}

void TunerPanel::onFinished() {
    setRunning(false);
    if (!job_->result()) {
        setStatus(tr("The tuner failed: %1").arg(qstr(job_->error())), true);
        emit finished();
        return;
    }
    result_ = job_->result();
    const TuneResult& r = *result_;
    // Candidates, each counted once: refinement re-simulates the best few, which are no more
    // candidates (TuneResult::refined).
    const int evaluated =
        r.cancelled ? std::min(job_->latest().evaluated, candidates_) : static_cast<int>(r.outcomes.size());
    // The best is re-evaluated with every pass at the end, so the final answer can differ a
    // little from the best seen while screening: end the curve on the final answer.
    const double best = r.best ? r.outcomes[*r.best].samples_per_s : 0.0;
    const int lastX = curve_->lastPoint() ? static_cast<int>(curve_->lastPoint()->x()) : 0;
    curve_->addPoint(std::max(evaluated, lastX), best);
    progress_->setFormat(tr("%v / %m candidates"));
    progress_->setRange(0, std::max(candidates_, 1));
    progress_->setValue(r.cancelled ? std::min(evaluated, candidates_) : candidates_);
    model_->setResult(r);
    pareto_->setData(r, runOptions_.memory_limit_bytes);
    if (proxy_->rowCount() > 0) table_->selectRow(0);
    const QString candidates = evaluated == 1 ? tr("1 candidate") : tr("%1 candidates").arg(evaluated);
    const QString took =
        r.elapsed_ms < 1000 ? tr("%1 ms").arg(r.elapsed_ms, 0, 'f', 0) : tr("%1 s").arg(r.elapsed_ms / 1000, 0, 'f', 2);
    if (r.cancelled) setStatus(tr("Cancelled after %1.").arg(candidates));
    else setStatus(tr("Done: %1 in %2.").arg(candidates, took));
    summary_->setText(tuneSummaryHtml(r, evaluated));
    emit finished();
}

}  // namespace mario::gui
