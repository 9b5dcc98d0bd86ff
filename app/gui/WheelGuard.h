#pragma once
// Scrolling a panel never changes a setting: a spin box or combo box takes the mouse wheel
// only while it has keyboard focus (clicked or tabbed into). Otherwise the wheel goes to its
// parent, so the side panel scrolls under the pointer as the user expects (issue 14: the
// wheel over a spin box changed PP while the user scrolled the panel).
#include <QObject>

class QWidget;

namespace mario::gui {

class WheelGuard : public QObject {
    Q_OBJECT
public:
    // Guards every spin box and combo box inside `panel` (created so far), owned by it.
    static void protect(QWidget* panel);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    using QObject::QObject;
};

}  // namespace mario::gui
