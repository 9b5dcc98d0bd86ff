#include "views/TickSpacing.h"

#include <QFontMetrics>
#include <algorithm>
#include <qcustomplot.h>

namespace mario::views {
namespace {

// QCustomPlot's own default: what a plot with room to spare keeps showing.
constexpr int kPreferredTicks = 5;

bool isVertical(const QCPAxis* axis) { return axis->orientation() == Qt::Vertical; }

// Where QCustomPlot's axis painter puts each label (centred on its tick, outside the axis
// rect past the tick and the padding), sized as it measures them.
QVector<QRect> rectsFor(const QCPAxis* axis, const QVector<double>& ticks, const QVector<QString>& labels) {
    QVector<QRect> rects;
    const QFontMetrics metrics(axis->tickLabelFont());
    const QRect area = axis->axisRect()->rect();
    const int offset = std::max(axis->tickLengthOut(), 0) + axis->tickLabelPadding();
    for (qsizetype i = 0; i < ticks.size() && i < labels.size(); ++i) {
        if (!axis->range().contains(ticks[i])) continue;  // generated beyond the range, never drawn
        const QSize size = metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignHCenter, labels[i]).size();
        const int at = qRound(axis->coordToPixel(ticks[i]));
        switch (axis->axisType()) {
            case QCPAxis::atLeft:
                rects.append(
                    {area.left() - offset - size.width(), at - size.height() / 2, size.width(), size.height()});
                break;
            case QCPAxis::atRight:
                rects.append({area.right() + offset, at - size.height() / 2, size.width(), size.height()});
                break;
            case QCPAxis::atTop:
                rects.append({at - size.width() / 2, area.top() - offset - size.height(), size.width(), size.height()});
                break;
            case QCPAxis::atBottom:
                rects.append({at - size.width() / 2, area.bottom() + offset, size.width(), size.height()});
                break;
        }
    }
    return rects;
}

// The most ticks, up to kPreferredTicks, whose labels keep apart on the axis as laid out now.
// True when that changed the ticker (the layout must then be redone).
bool fitTickCount(QCPAxis* axis) {
    const QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
    if (!ticker || ticker.dynamicCast<QCPAxisTickerText>() || !axis->visible() || !axis->tickLabels()) return false;
    if (axis->axisRect()->width() <= 0 || axis->axisRect()->height() <= 0) return false;
    const QFontMetrics metrics(axis->tickLabelFont());
    // Half a line between numbers up the side, two spaces between numbers along the bottom.
    const int gap = isVertical(axis) ? metrics.height() / 2 : metrics.horizontalAdvance(QStringLiteral("  "));
    const QChar format = axis->numberFormat().isEmpty() ? QLatin1Char('g') : axis->numberFormat().at(0);
    const int before = ticker->tickCount();
    int count = kPreferredTicks;
    for (; count > 1; --count) {
        ticker->setTickCount(count);
        QVector<double> ticks;
        QVector<QString> labels;
        ticker->generate(axis->range(), axis->parentPlot()->locale(), format, axis->numberPrecision(), ticks, nullptr,
                         &labels);
        if (!labelsCrowded(rectsFor(axis, ticks, labels), isVertical(axis), gap)) break;
    }
    ticker->setTickCount(count);
    return count != before;
}

}  // namespace

QVector<QRect> tickLabelRects(const QCPAxis* axis) {
    return rectsFor(axis, axis->tickVector(), axis->tickVectorLabels());
}

bool labelsCrowded(const QVector<QRect>& rects, bool vertical, int gap) {
    QVector<QRect> sorted = rects;
    std::sort(sorted.begin(), sorted.end(), [vertical](const QRect& a, const QRect& b) {
        return vertical ? a.top() < b.top() : a.left() < b.left();
    });
    for (qsizetype i = 1; i < sorted.size(); ++i) {
        const QRect& a = sorted[i - 1];
        const QRect& b = sorted[i];
        const int apart = vertical ? b.top() - (a.top() + a.height()) : b.left() - (a.left() + a.width());
        if (apart < gap) return true;
    }
    return false;
}

void relayout(QCustomPlot* plot) {
    plot->plotLayout()->update(QCPLayoutElement::upPreparation);
    plot->plotLayout()->update(QCPLayoutElement::upMargins);
    plot->plotLayout()->update(QCPLayoutElement::upLayout);
}

void keepTickLabelsApart(QCustomPlot* plot) {
    static const char* const kInstalled = "mario-tick-spacing";
    if (plot->property(kInstalled).toBool()) return;
    plot->setProperty(kInstalled, true);
    // After the layout (the axis rect's final size) and before drawing; the ticks generated in
    // this layout's first phase are redone with the fitted count when it changed.
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
        const bool x = fitTickCount(plot->xAxis);
        const bool y = fitTickCount(plot->yAxis);
        if (x || y) relayout(plot);
    });
}

}  // namespace mario::views
