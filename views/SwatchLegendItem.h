#pragma once
// A legend entry that is a colour swatch and a word, not tied to a plottable: the Gantt
// draws every kind from one plottable, yet its legend needs one entry per kind.
#include <qcustomplot.h>

namespace mario::views {

class SwatchLegendItem : public QCPAbstractLegendItem {
    Q_OBJECT
public:
    // overlay is drawn over fill (a hatch); Qt::NoBrush for none.
    SwatchLegendItem(QCPLegend* legend, const QBrush& fill, const QBrush& overlay, const QString& text);

    QString text() const { return text_; }
    QColor fillColor() const { return fill_.color(); }

protected:
    void draw(QCPPainter* painter) override;
    QSize minimumOuterSizeHint() const override;

private:
    QBrush fill_;
    QBrush overlay_;
    QString text_;
};

}  // namespace mario::views
