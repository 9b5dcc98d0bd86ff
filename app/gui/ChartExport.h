#pragma once
// Exports of what the window shows: the charts as PNG, SVG or PDF (vector where the format
// allows), and the schedule as a Chrome trace (*.json) or PyTorch compute_only CSV (*.csv).
#include <QString>

#include "app/gui/ScheduleComputation.h"

class QWidget;

namespace mario::gui {

// `note`, when given, receives what the export left out (a CSV's recomputations).
bool exportSchedule(const QString& path, const ComputedSchedule& schedule, QWidget* charts, QString* error,
                    QString* note = nullptr);

}  // namespace mario::gui
