#pragma once
// A title above a chart, as one pane of a splitter: the compare and live-run windows stack
// two schedules this way.
#include <QLabel>
#include <QVBoxLayout>
#include <QWidget>

namespace mario::gui {

inline QWidget* titledPane(QLabel* title, QWidget* chart, QWidget* parent) {
    auto* pane = new QWidget(parent);
    auto* layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(title);
    layout->addWidget(chart, 1);
    return pane;
}

}  // namespace mario::gui
