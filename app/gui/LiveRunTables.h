#pragma once
// The numbers beside a live run's charts (issue 14, item 6): one row per iteration (its step,
// how far the simulation is from it, its loss; the first marked as the warm-up) and one row per
// device (the simulated and the median measured time of its measured compute instructions, and
// the deviation between them, by core's simulationError).
#include <QWidget>

class QTableWidget;

namespace mario::gui {

class LiveMeasurements;

class LiveRunTables : public QWidget {
    Q_OBJECT
public:
    enum IterationColumn { Iteration, Step, StepDeviation, Loss, IterationColumns };
    enum DeviceColumn { Device, Simulated, Measured, Deviation, DeviceColumns };

    explicit LiveRunTables(QWidget* parent = nullptr);

    // Rebuilds both tables from the measurements so far.
    void refresh(const LiveMeasurements& measurements);

    QTableWidget* iterations() const { return iterations_; }
    QTableWidget* devices() const { return devices_; }

private:
    QTableWidget *iterations_, *devices_;
};

}  // namespace mario::gui
