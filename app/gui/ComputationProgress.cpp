#include "app/gui/ComputationProgress.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>

#include "app/gui/ScheduleDocument.h"

namespace mario::gui {

ComputationProgress::ComputationProgress(ScheduleDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), label_(new QLabel(this)), bar_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)), reveal_(new QTimer(this)), clock_(new QTimer(this)) {
    setObjectName("computationProgress");
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    bar_->setMaximumWidth(160);
    bar_->setTextVisible(false);
    cancel_->setObjectName("cancelComputation");
    cancel_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);  // a button, not a bar across the status line
    cancel_->setToolTip(tr("Stop: the schedule, settings and title stay as shown"));
    layout->addWidget(label_);
    layout->addWidget(bar_);
    layout->addWidget(cancel_);
    hide();
    reveal_->setSingleShot(true);
    reveal_->setInterval(kShowAfterMs);
    connect(reveal_, &QTimer::timeout, this, &QWidget::show);
    // The seconds so far, so a long step visibly lives (core reports nothing within a step).
    clock_->setInterval(1000);
    connect(clock_, &QTimer::timeout, this, &ComputationProgress::updateLabel);
    connect(cancel_, &QPushButton::clicked, document_, &ScheduleDocument::cancelComputation);
    connect(document_, &ScheduleDocument::computationStarted, this,
            [this](const QString& what) { started(what, document_->isOpening()); });
    connect(document_, &ScheduleDocument::computationProgress, this, &ComputationProgress::progressed);
    connect(document_, &ScheduleDocument::computationEnded, this, &ComputationProgress::ended);
}

QString ComputationProgress::text() const { return label_->text(); }

void ComputationProgress::started(const QString& what, bool atOnce) {
    what_ = what;
    phase_.clear();
    bar_->setRange(0, 0);  // busy until the first step is reported
    elapsed_.start();
    clock_->start();
    updateLabel();
    if (atOnce) show();
    else if (isHidden()) reveal_->start();
}

void ComputationProgress::progressed(int step, int steps, const QString& phase) {
    phase_ = phase;
    bar_->setRange(0, steps);
    bar_->setValue(step);
    updateLabel();
}

void ComputationProgress::ended() {
    reveal_->stop();
    clock_->stop();
    hide();
}

void ComputationProgress::updateLabel() {
    const qint64 seconds = elapsed_.isValid() ? elapsed_.elapsed() / 1000 : 0;
    QString text = phase_.isEmpty() ? tr("%1…").arg(what_) : tr("%1: %2…").arg(what_, phase_);
    if (seconds > 0) text += tr(" %1 s").arg(seconds);
    label_->setText(text);
}

}  // namespace mario::gui
