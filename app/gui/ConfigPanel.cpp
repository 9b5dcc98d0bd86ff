#include "app/gui/ConfigPanel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTimer>
#include <filesystem>
#include <system_error>

#include "app/gui/WheelGuard.h"
#include "core/io/ProfileJson.h"
#include "core/model/Limits.h"

namespace mario::gui {
namespace {

constexpr int kProfilePathRole = Qt::UserRole;     // a measured entry's normalised path
constexpr int kFromConfigRole = Qt::UserRole + 1;  // an entry that only the shown config needs
constexpr int kUnitIndex = 1;                      // after "analytical"
constexpr int kFirstProfileIndex = 2;              // measured profiles follow the two cost models

QSpinBox* spin(QWidget* parent, int lo, int hi) {
    auto* box = new QSpinBox(parent);
    box->setRange(lo, hi);
    return box;
}

void choose(QComboBox* box, const std::string& value) {
    const int index = box->findText(QString::fromStdString(value), Qt::MatchFixedString);
    if (index >= 0) box->setCurrentIndex(index);
}

// Entries added for one config (its inline model, a profile beside its file) go when
// another config is shown, so the boxes do not collect every file ever opened.
void removeEntriesFromConfig(QComboBox* box) {
    for (int i = box->count() - 1; i >= 0; --i)
        if (box->itemData(i, kFromConfigRole).toBool()) box->removeItem(i);
}

bool isFromConfig(const QComboBox* box) { return box->currentData(kFromConfigRole).toBool(); }

// A model or hardware written inline in the config file is no preset. It gets an entry of
// its own, so that editing another setting keeps it instead of swapping in whichever preset
// the box happened to show. `defined` is false for unit mode's empty placeholders.
void choosePresetOrOwn(QComboBox* box, const std::string& name, bool defined) {
    removeEntriesFromConfig(box);
    const int index = box->findText(QString::fromStdString(name), Qt::MatchFixedString);
    if (index >= 0 || !defined) {
        if (index >= 0) box->setCurrentIndex(index);
        return;
    }
    box->addItem(name.empty() ? ConfigPanel::tr("(from config)")
                              : ConfigPanel::tr("%1 (from config)").arg(QString::fromStdString(name)));
    box->setItemData(box->count() - 1, true, kFromConfigRole);
    box->setCurrentIndex(box->count() - 1);
}

// A profile path as the costs box stores and compares it: a config's relative or unnormalised
// spelling of a library profile must still find that profile's entry.
QString normalisedProfilePath(const std::string& path) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    if (ec) absolute = path;
    return QString::fromStdString(absolute.lexically_normal().string());
}

QString profileLabel(const QString& path) {
    return ConfigPanel::tr("measured: %1").arg(QString::fromStdString(PresetLibrary::profileName(path.toStdString())));
}

// What the profile was measured on, so a user can tell which entry fits the model before
// choosing it. The files are small; an unreadable one still shows its path.
QString profileToolTip(const QString& path) {
    QStringList lines{path};
    auto profile = readProfileProvenance(path.toStdString());
    if (!profile) return lines.front();
    if (!profile->model.empty()) lines << ConfigPanel::tr("model: %1").arg(QString::fromStdString(profile->model));
    if (!profile->hardware.empty())
        lines << ConfigPanel::tr("hardware: %1").arg(QString::fromStdString(profile->hardware));
    if (profile->sequence_length > 0) lines << ConfigPanel::tr("sequence length: %1").arg(profile->sequence_length);
    return lines.join('\n');
}

}  // namespace

ConfigPanel::ConfigPanel(const PresetLibrary& presets, QWidget* parent)
    : QGroupBox(tr("Settings"), parent), presets_(presets) {
    auto* form = new QFormLayout(this);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    model_ = new QComboBox(this);
    model_->setObjectName("model");
    hardware_ = new QComboBox(this);
    hardware_->setObjectName("hardware");
    for (const auto& name : presets.modelNames()) model_->addItem(QString::fromStdString(name));
    for (const auto& name : presets.hardwareNames()) hardware_->addItem(QString::fromStdString(name));
    costs_ = new QComboBox(this);
    costs_->setObjectName("costs");
    costs_->addItems({tr("analytical"), tr("unit (teaching)")});
    // Resolved as the config reader resolves a profile's name, so a config naming a bundled
    // profile selects that profile's entry.
    for (const auto& name : presets.profileNames())
        addProfileEntry(normalisedProfilePath(presets.resolveProfile(name)), false);
    // Profile names can be long and the side panel has a fixed width: the costs box asks
    // for its longest entry, and the form gives it a line of its own when that does not fit.
    costs_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    scheme_ = new QComboBox(this);
    scheme_->setObjectName("scheme");
    for (const SchemeInfo& scheme : schemeCatalog()) {
        scheme_->addItem(QString::fromUtf8(scheme.name.data(), static_cast<int>(scheme.name.size())));
        scheme_->setItemData(scheme_->count() - 1,
                             QString::fromUtf8(scheme.description.data(), static_cast<int>(scheme.description.size())),
                             Qt::ToolTipRole);
    }
    pp_ = spin(this, 1, 1024);
    pp_->setObjectName("pp");
    dp_ = spin(this, 1, 4096);
    tp_ = spin(this, 1, 64);
    chunks_ = spin(this, 1, 16);
    mbs_ = spin(this, 1, 1024);
    // The config reader's limits (docs/limits.md), so the window reaches every size a file can.
    global_ = spin(this, 1, limits::kMaxGlobalBatch);
    global_->setObjectName("globalBatch");
    microbatches_ = spin(this, 1, limits::kMaxMicrobatches);
    microbatches_->setObjectName("microbatches");
    // parallel.layer_split: an explicit split or "search" stays in the file (a third entry shows it).
    layerSplit_ = new QComboBox(this);
    layerSplit_->setObjectName("layerSplit");
    layerSplit_->addItem(tr("even"), int(LayerSplitKind::Even));
    layerSplit_->addItem(tr("balanced"), int(LayerSplitKind::Balanced));
    layerSplit_->setItemData(0, tr("the layers spread evenly, the extra ones on middle positions"), Qt::ToolTipRole);
    layerSplit_->setItemData(1,
                             tr("layers moved between neighbouring positions so that no device's forward, backward "
                                "and recompute is heavier than it must be"),
                             Qt::ToolTipRole);
    layerSplit_->setToolTip(tr("which transformer layers each stage holds (parallel.layer_split); the device table "
                               "lists them"));
    // What the analytical model prices beyond the split (core/model/TrainingConfig.h).
    attention_ = new QComboBox(this);
    attention_->setObjectName("attention");
    attention_->addItem(tr("FlashAttention"), int(TrainingConfig::Attention::Flash));
    attention_->addItem(tr("materialised"), int(TrainingConfig::Attention::Materialized));
    attention_->addItem(tr("eager"), int(TrainingConfig::Attention::Eager));
    attention_->setItemData(1, tr("Megatron's fused softmax over kept s×s scores"), Qt::ToolTipRole);
    attention_->setItemData(2, tr("unfused scale, mask and softmax, as PyTorch eager and mario-executor run"),
                            Qt::ToolTipRole);
    attention_->setToolTip(tr("FlashAttention keeps no s×s scores; materialised attention keeps them (Megatron-LM "
                              "before 2022, Megatron-DeepSpeed without --use-flash-attn)"));
    recompute_ = new QComboBox(this);
    recompute_->setObjectName("recompute");
    recompute_->addItem(tr("none"), int(TrainingConfig::Recompute::None));
    recompute_->addItem(tr("selective"), int(TrainingConfig::Recompute::Selective));
    recompute_->addItem(tr("full"), int(TrainingConfig::Recompute::Full));
    recompute_->setToolTip(tr("the framework's own recomputation inside the backward (Megatron's "
                              "--recompute-granularity); Mario's checkpointing is the checkpoint pass"));
    memory_ = new QDoubleSpinBox(this);
    memory_->setObjectName("memory");
    memory_->setRange(0, 100000);
    memory_->setSuffix(" GB");
    memory_->setSpecialValueText(tr("no limit"));
    note_ = new QLabel(this);
    note_->setObjectName("configNote");
    note_->setWordWrap(true);
    form->addRow(tr("model"), model_);
    form->addRow(tr("hardware"), hardware_);
    form->addRow(tr("costs"), costs_);
    form->addRow(tr("scheme"), scheme_);
    form->addRow(tr("PP"), pp_);
    form->addRow(tr("DP"), dp_);
    form->addRow(tr("TP"), tp_);
    form->addRow(tr("chunks"), chunks_);
    form->addRow(tr("layer split"), layerSplit_);
    form->addRow(tr("micro-batch size"), mbs_);
    form->addRow(tr("global batch"), global_);
    form->addRow(tr("micro-batches"), microbatches_);
    form->addRow(tr("memory / device"), memory_);
    form->addRow(tr("attention"), attention_);
    form->addRow(tr("framework recompute"), recompute_);
    form->addRow(note_);

    // Spin boxes fire on every keystroke; wait for the user to pause.
    debounce_ = new QTimer(this);
    debounce_->setSingleShot(true);
    debounce_->setInterval(250);
    connect(debounce_, &QTimer::timeout, this, [this] {
        if (auto config = editedConfig()) emit configEdited(*config);
    });
    for (QComboBox* box : {model_, hardware_, costs_, scheme_, layerSplit_, attention_, recompute_})
        connect(box, &QComboBox::currentIndexChanged, this, &ConfigPanel::changed);
    for (QSpinBox* box : {pp_, dp_, tp_, chunks_, mbs_, global_, microbatches_})
        connect(box, &QSpinBox::valueChanged, this, &ConfigPanel::changed);
    connect(memory_, &QDoubleSpinBox::valueChanged, this, &ConfigPanel::changed);
    // A spin box's line edit takes every Ctrl+Z for its own undo, which after an applied edit
    // retyped the old number as a new change (the document's undo never ran).
    for (QAbstractSpinBox* box :
         std::initializer_list<QAbstractSpinBox*>{pp_, dp_, tp_, chunks_, mbs_, global_, microbatches_, memory_}) {
        // The spin box hands the event to its line edit by a direct call, past the line
        // edit's filters: both are watched, whichever has the focus.
        box->installEventFilter(this);
        if (auto* edit = box->findChild<QLineEdit*>()) edit->installEventFilter(this);
    }
    WheelGuard::protect(this);
    showConfig(std::nullopt);
}

bool ConfigPanel::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::ShortcutOverride) return QGroupBox::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    const bool undoKey = key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo);
    // Typing still pending belongs to the field (its own undo takes it back, nothing reached the
    // document); once applied, the change is a document step like any other.
    if (!undoKey || debounce_->isActive()) return QGroupBox::eventFilter(watched, event);
    event->ignore();  // not overridden: the window's Undo or Redo shortcut runs
    return true;
}

void ConfigPanel::changed() {
    if (showing_) return;
    const CostMode mode = costMode();
    if ((mode == CostMode::Unit) != (shownMode_ == CostMode::Unit)) carryMicrobatches(mode);
    else if (mode != shownMode_) switchNote_.clear();
    shownMode_ = mode;
    showCostMode(mode);
    debounce_->start();
}

// Unit costs count micro-batches; the other modes derive them from the global batch. A switch
// between the two keeps the count the user sees (it silently went back to the global batch's),
// and says which model and hardware now price the schedule (a unit-cost config has none).
void ConfigPanel::carryMicrobatches(CostMode to) {
    showing_ = true;
    const int perMicrobatch = mbs_->value() * dp_->value();
    if (to == CostMode::Unit) microbatches_->setValue(std::max(1, global_->value() / std::max(1, perMicrobatch)));
    else global_->setValue(microbatches_->value() * perMicrobatch);
    showing_ = false;
    switchNote_ =
        (to == CostMode::Unit ? tr("Unit costs: every forward costs 1, backward 2, recompute 1; %1 micro-batches.")
                                    .arg(microbatches_->value())
                              : tr("Costs now from %1 on %2 (choose the model and hardware above); %3 micro-batches, a "
                                   "global batch of %4.")
                                    .arg(model_->currentText(), hardware_->currentText())
                                    .arg(microbatches_->value())
                                    .arg(global_->value()));
    switchNoteName_ = shown_ ? shown_->name : std::string();
    switchNoteUnit_ = to == CostMode::Unit;
    note_->setText(switchNote_);
}

ConfigPanel::CostMode ConfigPanel::costMode() const {
    const int index = costs_->currentIndex();
    if (index == kUnitIndex) return CostMode::Unit;
    return index >= kFirstProfileIndex ? CostMode::Measured : CostMode::Analytical;
}

// Unit costs need no model or hardware and count micro-batches directly. A measured profile
// still needs the model (its layer count and sequence length) and the hardware (the links).
void ConfigPanel::showCostMode(CostMode mode) {
    const bool unit = mode == CostMode::Unit;
    microbatches_->setEnabled(unit);
    global_->setEnabled(!unit);
    model_->setEnabled(!unit);
    hardware_->setEnabled(!unit);
    layerSplit_->setEnabled(!unit);
    // Only the analytical model prices kernels; unit costs and profiles fix their own times.
    attention_->setEnabled(mode == CostMode::Analytical);
    recompute_->setEnabled(mode == CostMode::Analytical);
    // Without a limit the verdict judges each device against one card (core/sim/MemoryFit.h):
    // name that card's memory where the limit would be, so "no limit" never reads as "any size".
    double cardGb = 0;
    if (!unit && shown_) {
        if (isFromConfig(hardware_)) cardGb = shown_->hardware.memory_gb;
        else if (auto hardware = presets_.hardware(hardware_->currentText().toStdString()))
            cardGb = hardware->memory_gb;
    }
    memory_->setSpecialValueText(cardGb > 0 ? tr("no limit (card %1 GB)").arg(cardGb, 0, 'g', 4) : tr("no limit"));
}

void ConfigPanel::addProfileEntry(const QString& path, bool fromConfig) {
    costs_->addItem(profileLabel(path), path);
    const int index = costs_->count() - 1;
    costs_->setItemData(index, profileToolTip(path), Qt::ToolTipRole);
    if (fromConfig) costs_->setItemData(index, true, kFromConfigRole);
}

// The entry for a profile path, added when the profile is not the library's (one beside a
// config file elsewhere).
int ConfigPanel::profileEntry(const std::string& path) {
    const QString wanted = normalisedProfilePath(path);
    for (int i = kFirstProfileIndex; i < costs_->count(); ++i)
        if (costs_->itemData(i, kProfilePathRole).toString() == wanted) return i;
    addProfileEntry(wanted, true);
    return costs_->count() - 1;
}

void ConfigPanel::showConfig(const std::optional<Config>& config) {
    showing_ = true;
    shown_ = config;
    setEnabled(config.has_value());
    // Without a config (nothing open yet, or a plan file) there are no settings to show:
    // the fields are hidden rather than left holding another schedule's or default values.
    auto* form = static_cast<QFormLayout*>(layout());
    for (int row = 0; row + 1 < form->rowCount(); ++row) form->setRowVisible(row, config.has_value());
    // The note on a cost-mode switch stays while the schedule shown is that switch's (the same
    // config name, in the mode switched to); any other config drops it.
    if (!config || config->name != switchNoteName_ || config->unit_costs.has_value() != switchNoteUnit_)
        switchNote_.clear();
    note_->setText(config ? switchNote_
                          : tr("No settings: a plan file fixes its own stages, costs and programs (the summary "
                               "and the timeline show them)."));
    if (config) {
        const ParallelConfig& p = config->parallel;
        choosePresetOrOwn(model_, config->model.name, config->model.layers > 0);
        choosePresetOrOwn(hardware_, config->hardware.name, config->hardware.peak_tflops > 0);
        // A unit-cost config names no model: the boxes show the first presets, not whatever the
        // previous file left there (which a switch to analytical costs then took silently).
        if (config->model.layers <= 0 && model_->count() > 0) model_->setCurrentIndex(0);
        if (config->hardware.peak_tflops <= 0 && hardware_->count() > 0) hardware_->setCurrentIndex(0);
        removeEntriesFromConfig(costs_);
        if (config->unit_costs) costs_->setCurrentIndex(kUnitIndex);
        else if (config->profile) costs_->setCurrentIndex(profileEntry(*config->profile));
        else costs_->setCurrentIndex(0);
        choose(scheme_, std::string(schemeName(p.scheme)));
        pp_->setValue(p.pp);
        dp_->setValue(p.dp);
        tp_->setValue(p.tp);
        chunks_->setValue(p.chunks);
        if (layerSplit_->count() > 2) layerSplit_->removeItem(2);
        if (p.layer_split.kind == LayerSplitKind::Explicit) {
            QStringList counts;
            for (int k : p.layer_split.counts) counts << QString::number(k);
            layerSplit_->addItem(tr("as in the file: %1").arg(counts.join("-")), int(LayerSplitKind::Explicit));
        } else if (p.layer_split.kind == LayerSplitKind::Search) {
            // Searched when the file opened, with the file's passes: a pass ticked later does
            // not search again, so the entry says whose passes chose the split.
            layerSplit_->addItem(tr("as in the file: search (with the file's passes)"), int(LayerSplitKind::Search));
        }
        layerSplit_->setCurrentIndex(layerSplit_->findData(int(p.layer_split.kind)));
        mbs_->setValue(p.micro_batch_size);
        global_->setValue(p.global_batch_size);
        microbatches_->setValue(config->microbatchCount());
        memory_->setValue(config->memory_limit_bytes ? *config->memory_limit_bytes / 1e9 : 0);
        attention_->setCurrentIndex(attention_->findData(int(config->training.attention)));
        recompute_->setCurrentIndex(recompute_->findData(int(config->training.recompute)));
        shownMode_ = costMode();
        showCostMode(shownMode_);
    }
    showing_ = false;
}

std::optional<Config> ConfigPanel::editedConfig() const {
    if (!shown_) return std::nullopt;
    Config config = *shown_;
    const CostMode mode = costMode();
    if (mode != CostMode::Unit) {
        // An entry from the config keeps the config's own model or hardware.
        if (!isFromConfig(model_))
            if (auto model = presets_.model(model_->currentText().toStdString())) config.model = *model;
        if (!isFromConfig(hardware_))
            if (auto hardware = presets_.hardware(hardware_->currentText().toStdString())) config.hardware = *hardware;
        config.unit_costs.reset();
        config.microbatches.reset();
    } else {
        if (!config.unit_costs) config.unit_costs = UnitCosts{};
        config.microbatches = microbatches_->value();
    }
    if (mode == CostMode::Measured) {
        const QString path = costs_->currentData(kProfilePathRole).toString();
        // The same file keeps the config's own spelling of its path.
        const bool same = shown_->profile && normalisedProfilePath(*shown_->profile) == path;
        if (!same) config.profile = path.toStdString();
    } else {
        config.profile.reset();
    }
    ParallelConfig& p = config.parallel;
    p.scheme = parseScheme(scheme_->currentText().toStdString()).value_or(Scheme::OneFOneB);
    p.pp = pp_->value();
    p.dp = dp_->value();
    p.tp = tp_->value();
    p.chunks = schemeInfo(p.scheme).chunked ? std::max(2, chunks_->value()) : 1;
    p.micro_batch_size = mbs_->value();
    p.global_batch_size = global_->value();
    // Teaching mode has no layers to split; an explicit split keeps the file's counts, "search" its word.
    const auto split = static_cast<LayerSplitKind>(layerSplit_->currentData().toInt());
    if (mode == CostMode::Unit || split == LayerSplitKind::Even) p.layer_split = {};
    else if (split == LayerSplitKind::Balanced) p.layer_split = {LayerSplitKind::Balanced, {}};
    if (memory_->value() > 0) config.memory_limit_bytes = memory_->value() * 1e9;
    else config.memory_limit_bytes.reset();
    config.training.attention = static_cast<TrainingConfig::Attention>(attention_->currentData().toInt());
    config.training.recompute = static_cast<TrainingConfig::Recompute>(recompute_->currentData().toInt());
    return config;
}

}  // namespace mario::gui
