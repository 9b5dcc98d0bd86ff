#include "app/gui/WheelGuard.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>

namespace mario::gui {

void WheelGuard::protect(QWidget* panel) {
    auto* guard = new WheelGuard(panel);
    auto guardWidget = [guard](QWidget* widget) {
        widget->setFocusPolicy(Qt::StrongFocus);  // no focus from the wheel itself
        widget->installEventFilter(guard);
    };
    for (auto* box : panel->findChildren<QAbstractSpinBox*>()) guardWidget(box);
    for (auto* box : panel->findChildren<QComboBox*>()) guardWidget(box);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
    auto* widget = qobject_cast<QWidget*>(watched);
    if (event->type() != QEvent::Wheel || !widget || widget->hasFocus() || !widget->parentWidget()) return false;
    // Handed to the parent, from where Qt passes an unhandled wheel up to the scroll area.
    QApplication::sendEvent(widget->parentWidget(), event);
    return true;
}

}  // namespace mario::gui
