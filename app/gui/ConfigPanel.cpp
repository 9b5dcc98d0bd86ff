#include "ConfigPanel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>
#include <QTimer>

namespace mario::gui {
namespace {

QSpinBox* spin(QWidget* parent, int lo, int hi) {
    auto* box = new QSpinBox(parent);
    box->setRange(lo, hi);
    return box;
}

void choose(QComboBox* box, const std::string& value) {
    const int index = box->findText(QString::fromStdString(value), Qt::MatchFixedString);
    if (index >= 0) box->setCurrentIndex(index);
}

}  // namespace

ConfigPanel::ConfigPanel(const PresetLibrary& presets, QWidget* parent)
    : QGroupBox(tr("Settings"), parent), presets_(presets) {
    auto* form = new QFormLayout(this);
    model_ = new QComboBox(this);
    hardware_ = new QComboBox(this);
    for (const auto& name : presets.modelNames()) model_->addItem(QString::fromStdString(name));
    for (const auto& name : presets.hardwareNames()) hardware_->addItem(QString::fromStdString(name));
    costs_ = new QComboBox(this);
    costs_->addItems({tr("analytical"), tr("unit (teaching)")});
    scheme_ = new QComboBox(this);
    scheme_->setObjectName("scheme");
    scheme_->addItems({"gpipe", "1f1b", "interleaved", "chimera"});
    pp_ = spin(this, 1, 1024);
    pp_->setObjectName("pp");
    dp_ = spin(this, 1, 4096);
    tp_ = spin(this, 1, 64);
    chunks_ = spin(this, 1, 16);
    mbs_ = spin(this, 1, 1024);
    global_ = spin(this, 1, 1 << 20);
    microbatches_ = spin(this, 1, 4096);
    memory_ = new QDoubleSpinBox(this);
    memory_->setRange(0, 100000);
    memory_->setSuffix(" GB");
    memory_->setSpecialValueText(tr("no limit"));
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    form->addRow(tr("model"), model_);
    form->addRow(tr("hardware"), hardware_);
    form->addRow(tr("costs"), costs_);
    form->addRow(tr("scheme"), scheme_);
    form->addRow(tr("PP"), pp_);
    form->addRow(tr("DP"), dp_);
    form->addRow(tr("TP"), tp_);
    form->addRow(tr("chunks"), chunks_);
    form->addRow(tr("micro-batch size"), mbs_);
    form->addRow(tr("global batch"), global_);
    form->addRow(tr("micro-batches"), microbatches_);
    form->addRow(tr("memory / device"), memory_);
    form->addRow(note_);

    // Spin boxes fire on every keystroke; wait for the user to pause.
    debounce_ = new QTimer(this);
    debounce_->setSingleShot(true);
    debounce_->setInterval(250);
    connect(debounce_, &QTimer::timeout, this, [this] {
        if (auto config = editedConfig()) emit configEdited(*config);
    });
    for (QComboBox* box : {model_, hardware_, costs_, scheme_})
        connect(box, &QComboBox::currentIndexChanged, this, &ConfigPanel::changed);
    for (QSpinBox* box : {pp_, dp_, tp_, chunks_, mbs_, global_, microbatches_})
        connect(box, &QSpinBox::valueChanged, this, &ConfigPanel::changed);
    connect(memory_, &QDoubleSpinBox::valueChanged, this, &ConfigPanel::changed);
    showConfig(std::nullopt);
}

void ConfigPanel::changed() {
    if (showing_) return;
    showCostMode(costs_->currentIndex() == 1);
    debounce_->start();
}

// Unit costs need no model or hardware and count micro-batches directly.
void ConfigPanel::showCostMode(bool unit) {
    microbatches_->setEnabled(unit);
    global_->setEnabled(!unit);
    model_->setEnabled(!unit);
    hardware_->setEnabled(!unit);
}

void ConfigPanel::showConfig(const std::optional<Config>& config) {
    showing_ = true;
    shown_ = config;
    setEnabled(config.has_value());
    note_->setText(config ? QString() : tr("A plan file fixes its own stages and costs."));
    if (config) {
        const ParallelConfig& p = config->parallel;
        choose(model_, config->model.name);
        choose(hardware_, config->hardware.name);
        costs_->setCurrentIndex(config->unit_costs ? 1 : 0);
        choose(scheme_, std::string(schemeName(p.scheme)));
        pp_->setValue(p.pp);
        dp_->setValue(p.dp);
        tp_->setValue(p.tp);
        chunks_->setValue(p.chunks);
        mbs_->setValue(p.micro_batch_size);
        global_->setValue(p.global_batch_size);
        microbatches_->setValue(config->microbatchCount());
        memory_->setValue(config->memory_limit_bytes ? *config->memory_limit_bytes / 1e9 : 0);
        showCostMode(config->unit_costs.has_value());
    }
    showing_ = false;
}

std::optional<Config> ConfigPanel::editedConfig() const {
    if (!shown_) return std::nullopt;
    Config config = *shown_;
    const bool unit = costs_->currentIndex() == 1;
    if (!unit) {
        auto model = presets_.model(model_->currentText().toStdString());
        auto hardware = presets_.hardware(hardware_->currentText().toStdString());
        if (model) config.model = *model;
        if (hardware) config.hardware = *hardware;
        config.unit_costs.reset();
        config.microbatches.reset();
    } else {
        if (!config.unit_costs) config.unit_costs = UnitCosts{};
        config.microbatches = microbatches_->value();
    }
    ParallelConfig& p = config.parallel;
    p.scheme = parseScheme(scheme_->currentText().toStdString()).value_or(Scheme::OneFOneB);
    p.pp = pp_->value();
    p.dp = dp_->value();
    p.tp = tp_->value();
    p.chunks = p.scheme == Scheme::Interleaved ? std::max(2, chunks_->value()) : 1;
    p.micro_batch_size = mbs_->value();
    p.global_batch_size = global_->value();
    if (memory_->value() > 0) config.memory_limit_bytes = memory_->value() * 1e9;
    else config.memory_limit_bytes.reset();
    return config;
}

}  // namespace mario::gui
