#pragma once
// One checkbox per pass (the paper's four and relax, beyond the paper) and "all".
#include <QGroupBox>
#include <map>
#include <vector>

#include "core/passes/PassReport.h"

class QCheckBox;

namespace mario::gui {

class PassPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit PassPanel(QWidget* parent = nullptr);
    // Shows the document's selection without emitting anything.
    void showPasses(const std::vector<PassId>& passes);
    QCheckBox* checkBox(PassId pass) const { return boxes_.at(pass); }
    QCheckBox* allBox() const { return all_; }

signals:
    void passToggled(mario::PassId pass, bool enabled);
    void paperPassesToggled(bool enabled);  // the "all" box

private:
    std::map<PassId, QCheckBox*> boxes_;
    QCheckBox* all_;
    bool showing_ = false;
};

}  // namespace mario::gui
