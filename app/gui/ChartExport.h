#pragma once
// Exports of what the window shows: the charts as PNG, SVG or PDF (vector where the format
// allows), and the schedule as a Chrome trace (*.json) or PyTorch compute_only CSV (*.csv),
// with the torchtitan settings that run it beside it (*.torchtitan.args), as `mario export`.
#include <QString>

#include "app/gui/ScheduleComputation.h"

class QWidget;

namespace mario::gui {

// `schedule` is what `input` computed to. `note`, when given, receives what the export left
// out (a CSV's recomputations and the passes that need them) and what else it wrote.
bool exportSchedule(const QString& path, const ScheduleInput& input, const ComputedSchedule& schedule, QWidget* charts,
                    QString* error, QString* note = nullptr);

// `charts` as it is on screen, as PNG, SVG or PDF by the extension of `path` (`title` names
// an SVG), written by core's one writer (core/io/TextFile.h); any other extension is refused.
bool exportChartImage(const QString& path, QWidget* charts, const QString& title, QString* error);

}  // namespace mario::gui
