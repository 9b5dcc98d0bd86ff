#pragma once
// The schedule's settings: model and hardware presets, cost mode (analytical, unit, or a
// measured profile), scheme and parallel sizes, micro-batching, the memory limit, and how the
// framework runs attention and its own recomputation. Every
// change is reported (debounced) as a whole Config; the document decides whether it can be
// built.
#include <QGroupBox>
#include <optional>
#include <string>

#include "core/io/PresetLibrary.h"
#include "core/model/Config.h"

class QComboBox;
class QSpinBox;
class QDoubleSpinBox;
class QLabel;
class QTimer;

namespace mario::gui {

class ConfigPanel : public QGroupBox {
    Q_OBJECT
public:
    ConfigPanel(const PresetLibrary& presets, QWidget* parent = nullptr);
    // Shows a config without emitting; nullopt (a plan file) disables the panel.
    void showConfig(const std::optional<Config>& config);
    std::optional<Config> editedConfig() const;

    QComboBox* schemeBox() const { return scheme_; }
    QComboBox* layerSplitBox() const { return layerSplit_; }
    QComboBox* costsBox() const { return costs_; }
    QSpinBox* pipelineBox() const { return pp_; }

signals:
    void configEdited(const mario::Config& config);

protected:
    // Ctrl+Z and Ctrl+Shift+Z in a number field: the field's own undo while its typing is not
    // applied yet (the debounce runs), else the window's undo of the document (docs/window.md).
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    enum class CostMode { Analytical, Unit, Measured };

    void changed();
    CostMode costMode() const;
    void showCostMode(CostMode mode);
    void carryMicrobatches(CostMode to);
    void addProfileEntry(const QString& path, bool fromConfig);
    int profileEntry(const std::string& path);

    const PresetLibrary& presets_;
    std::optional<Config> shown_;
    QComboBox *model_, *hardware_, *costs_, *scheme_, *layerSplit_, *attention_, *recompute_;
    QSpinBox *pp_, *dp_, *tp_, *chunks_, *mbs_, *global_, *microbatches_;
    QDoubleSpinBox* memory_;
    QLabel* note_;
    QTimer* debounce_;
    bool showing_ = false;
    CostMode shownMode_ = CostMode::Analytical;
    QString switchNote_;  // what a cost-mode switch carried over, while its schedule is shown
    std::string switchNoteName_;
    bool switchNoteUnit_ = false;  // the costs box's mode before the latest change
};

}  // namespace mario::gui
