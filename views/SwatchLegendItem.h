#pragma once
// A legend entry that is a colour swatch and a word, not tied to a plottable: the Gantt
// draws every kind from one plottable, yet its legend needs one entry per kind. Or a stroke of
// a pen and a word: a line drawn as an item (the memory limit, a QCPItemStraightLine spanning
// any zoom) is named in the legend above the plot, not by a text item inside it, where it
// covered the curves and bars it crossed (issue 39).
#include <qcustomplot.h>

namespace mario::views {

class SwatchLegendItem : public QCPAbstractLegendItem {
    Q_OBJECT
public:
    // overlay is drawn over fill (a hatch); Qt::NoBrush for none.
    SwatchLegendItem(QCPLegend* legend, const QBrush& fill, const QBrush& overlay, const QString& text);
    // A line sample in `stroke` instead of a swatch.
    SwatchLegendItem(QCPLegend* legend, const QPen& stroke, const QString& text);

    QString text() const { return text_; }
    QColor fillColor() const { return fill_.color(); }
    bool isLine() const { return stroke_.style() != Qt::NoPen; }
    QPen stroke() const { return stroke_; }

protected:
    void draw(QCPPainter* painter) override;
    QSize minimumOuterSizeHint() const override;

private:
    QBrush fill_;
    QBrush overlay_;
    QPen stroke_ = QPen(Qt::NoPen);
    QString text_;
};

}  // namespace mario::views
