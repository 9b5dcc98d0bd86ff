#pragma once
// One checkbox per pass (the paper's four and relax, beyond the paper) and "all".
#include <QGroupBox>
#include <QString>
#include <map>
#include <string>
#include <vector>

#include "core/passes/PassReport.h"

class QCheckBox;

namespace mario::gui {

class PassPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit PassPanel(QWidget* parent = nullptr);
    // Shows the document's selection without emitting anything. `applied`: the passes a plan
    // file already carries (PlanInfo::passes_applied), shown ticked and disabled: the plan holds
    // their result, so there is nothing to toggle. Overlap, redundancy and prepose act on
    // recomputations: without checkpointing they are greyed, with the reason as tooltip.
    void showPasses(const std::vector<PassId>& passes, const std::vector<std::string>& applied = {});
    QCheckBox* checkBox(PassId pass) const { return boxes_.at(pass); }
    QCheckBox* allBox() const { return all_; }

signals:
    void passToggled(mario::PassId pass, bool enabled);
    void paperPassesToggled(bool enabled);  // the "all" box

private:
    std::map<PassId, QCheckBox*> boxes_;
    std::map<PassId, QString> tooltips_;  // the pass table's, before any reason is added
    QCheckBox* all_;
    bool showing_ = false;
};

}  // namespace mario::gui
