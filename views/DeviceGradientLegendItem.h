#pragma once
// The colour scale of the memory-over-time chart's device lines, and its legend entry once
// there are too many devices for one entry each: a gradient strip "device 0 ▬▬▬ device 31",
// readable at 32 or 512 devices where 32 entries would overflow the plot (issue 14: "the
// memory-over-time chart has no legend"). Viridis, stopped short of its yellow end (unreadable
// on white): perceptually ordered and colour-blind safe, so device 0 → N reads as a progression.
#include <qcustomplot.h>

namespace mario::views {

// The colour of device `device` of `devices` on the viridis scale.
QColor deviceColor(int device, int devices);

class DeviceGradientLegendItem : public QCPAbstractLegendItem {
    Q_OBJECT
public:
    DeviceGradientLegendItem(QCPLegend* legend, int devices);

    int devices() const { return devices_; }
    // "device 0" and "device 31": the words at each end of the strip.
    QString firstLabel() const;
    QString lastLabel() const;

protected:
    void draw(QCPPainter* painter) override;
    QSize minimumOuterSizeHint() const override;

private:
    static constexpr int kStripWidth = 160;  // wide enough to see the hue walk at a glance

    int devices_;
};

}  // namespace mario::views
