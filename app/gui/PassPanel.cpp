#include "app/gui/PassPanel.h"

#include <QCheckBox>
#include <QVBoxLayout>
#include <algorithm>

#include "core/passes/PassManager.h"

namespace mario::gui {
namespace {

struct PassText {
    PassId pass;
    const char* label;
    const char* tip;
};

const PassText kPasses[] = {
    {PassId::Checkpoint, "apply checkpoint", "Checkpoint every forward; recompute right before its backward."},
    {PassId::Overlap, "overlap recompute", "Move each recompute ahead of the wait for its gradient."},
    {PassId::Redundancy, "remove redundancy", "Drop a recompute that directly follows its own forward."},
    {PassId::Prepose, "prepose forward", "Run checkpointed forwards early, inside bubbles."},
    {PassId::Relax, "relax (beyond the paper)", "Keep activations where the memory limit allows."},
    {PassId::BoundW, "bound deferred W (beyond the paper)",
     "Zero-bubble schedules defer weight gradients (W), and each keeps memory until it runs. Run Ws "
     "earlier where they would lift a device above the plan's balanced peak or the memory limit."},
    {PassId::Hide, "hide recompute (beyond the paper)",
     "Place every recomputation in the bubbles of its device, and keep the activations that one more "
     "activation set of memory allows. Runs last."},
};

}  // namespace

PassPanel::PassPanel(QWidget* parent) : QGroupBox(tr("Mario passes"), parent) {
    auto* layout = new QVBoxLayout(this);
    all_ = new QCheckBox(tr("all four (paper)"), this);
    all_->setTristate(true);
    layout->addWidget(all_);
    for (const PassText& text : kPasses) {
        auto* box = new QCheckBox(tr(text.label), this);
        box->setToolTip(tr(text.tip));
        box->setObjectName(QString::fromUtf8(passName(text.pass).data()));
        layout->addWidget(box);
        boxes_[text.pass] = box;
        connect(box, &QCheckBox::toggled, this, [this, pass = text.pass](bool on) {
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
