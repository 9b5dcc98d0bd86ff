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
        tooltips_[info.id] = box->toolTip();
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

namespace {

// The passes that only move, keep or drop recomputations (the paper's Figure 2 steps after
// checkpointing): without a checkpointed forward there is nothing for them to act on.
bool actsOnRecomputation(PassId pass) {
    return pass == PassId::Overlap || pass == PassId::Redundancy || pass == PassId::Prepose;
}

}  // namespace

void PassPanel::showPasses(const std::vector<PassId>& passes, const std::vector<std::string>& applied) {
    showing_ = true;
    auto isApplied = [&applied](PassId pass) {
        return std::find(applied.begin(), applied.end(), passInfo(pass).name) != applied.end();
    };
    const bool checkpointed =
        std::find(passes.begin(), passes.end(), PassId::Checkpoint) != passes.end() || isApplied(PassId::Checkpoint);
    int paper = 0;
    for (auto& [pass, box] : boxes_) {
        const bool baked = isApplied(pass);
        const bool on = baked || std::find(passes.begin(), passes.end(), pass) != passes.end();
        box->setChecked(on);
        if (on && !isBeyondPaper(pass)) ++paper;
        // A box that is on stays enabled without checkpointing, so that it can be turned off.
        const bool needsCheckpoint = actsOnRecomputation(pass) && !checkpointed && !on;
        box->setEnabled(!baked && !needsCheckpoint);
        QString tip = tooltips_[pass];
        if (baked)
            tip += tr("\n\nAlready applied in the plan file: a plan holds the passes' result, not the choice. Open "
                      "its config to toggle it.");
        else if (needsCheckpoint)
            tip += tr("\n\nNeeds checkpointing: it works on recomputations, and there are none without "
                      "\"apply checkpoint\". Tick that first.");
        box->setToolTip(tip);
    }
    all_->setCheckState(paper == 0                                        ? Qt::Unchecked
                        : paper == static_cast<int>(paperPasses().size()) ? Qt::Checked
                                                                          : Qt::PartiallyChecked);
    // A plan that carries all four has nothing the box could turn on or off.
    const auto paperList = paperPasses();
    all_->setEnabled(!std::all_of(paperList.begin(), paperList.end(), isApplied));
    showing_ = false;
}

}  // namespace mario::gui
