#include "app/gui/PassPanel.h"

#include <QCheckBox>
#include <QVBoxLayout>
#include <algorithm>

#include "core/passes/PassManager.h"
#include "core/passes/PassRegistry.h"

namespace mario::gui {

PassPanel::PassPanel(QWidget* parent) : QGroupBox(tr("Mario passes"), parent) {
    auto* layout = new QVBoxLayout(this);
    all_ = new QCheckBox(tr("all four (paper)"), this);
    all_->setTristate(true);
    layout->addWidget(all_);
    // One box per pass of the pass table (core/passes/PassRegistry.h), in its order.
    for (const PassInfo& info : passTable()) {
        auto* box = new QCheckBox(tr(info.label.data()), this);
        box->setToolTip(tr(info.tooltip.data()));
        box->setObjectName(QString::fromUtf8(info.name.data(), int(info.name.size())));
        layout->addWidget(box);
        boxes_[info.id] = box;
        connect(box, &QCheckBox::toggled, this, [this, pass = info.id](bool on) {
            if (!showing_) emit passToggled(pass, on);
        });
    }
    connect(all_, &QCheckBox::clicked, this, [this] {
        if (showing_) return;
        // A click on a partly checked box turns everything on.
        const bool on = all_->checkState() != Qt::Unchecked;
        emit paperPassesToggled(on);
    });
}

void PassPanel::showPasses(const std::vector<PassId>& passes) {
    showing_ = true;
    int paper = 0;
    for (auto& [pass, box] : boxes_) {
        const bool on = std::find(passes.begin(), passes.end(), pass) != passes.end();
        box->setChecked(on);
        if (on && !isBeyondPaper(pass)) ++paper;
    }
    all_->setCheckState(paper == 0                                        ? Qt::Unchecked
                        : paper == static_cast<int>(paperPasses().size()) ? Qt::Checked
                                                                          : Qt::PartiallyChecked);
    showing_ = false;
}

}  // namespace mario::gui
