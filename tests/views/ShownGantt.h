#pragma once
// A GanttView on screen (offscreen platform) with a timeline set and drawn, for the tests
// that drive it with real mouse and key events, and the scale they compute expectations with.
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "views/GanttView.h"

namespace mario::viewtest {

inline std::unique_ptr<views::GanttView> showView(views::Timeline timeline, QSize size = {1000, 420}) {
    auto view = std::make_unique<views::GanttView>();
    view->resize(size);
    view->show();
    if (!QTest::qWaitForWindowExposed(view.get())) qWarning("window not exposed");
    view->setTimeline(std::move(timeline));
    view->plot()->replot();
    return view;
}

// Milliseconds per pixel of the time axis as it is now.
inline double msPerPixel(const views::GanttView& view) {
    return view.plot()->xAxis->range().size() / view.plot()->axisRect()->width();
}

}  // namespace mario::viewtest
