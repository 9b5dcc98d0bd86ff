#pragma once
// A hand edit as a user makes it: the window's tests drag a box with real mouse events.
#include <QtTest>

#include "app/gui/MainWindow.h"
#include "tests/common/ProgramLookup.h"
#include "views/GanttView.h"

namespace mario::test {

// Drags the box of `action` on `device`, in edit mode, so that the cursor (the ghost's centre)
// lets go at `dropTime` on the chart's time axis.
inline void dragBox(gui::MainWindow& window, int device, const char* action, double dropTime) {
    views::GanttView* gantt = window.gantt();
    gantt->setEditMode(true);
    QWidget* target = gantt->plotWidget();
    const Plan& plan = window.document()->current().plan;
    const QPoint from = target->mapFrom(gantt, gantt->boxCenter({device, indexOf(plan, device, action)}));
    const QPoint to(target->mapFrom(gantt, gantt->pointAt(device, dropTime)).x(), from.y());
    QTest::mousePress(target, Qt::LeftButton, Qt::NoModifier, from);
    QTest::mouseMove(target, (from + to) / 2);
    QTest::mouseMove(target, to);
    QTest::mouseRelease(target, Qt::LeftButton, Qt::NoModifier, to);
}

}  // namespace mario::test
