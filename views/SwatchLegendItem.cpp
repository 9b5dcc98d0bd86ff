#include "views/SwatchLegendItem.h"

namespace mario::views {

SwatchLegendItem::SwatchLegendItem(QCPLegend* legend, const QBrush& fill, const QBrush& overlay, const QString& text)
    : QCPAbstractLegendItem(legend), fill_(fill), overlay_(overlay), text_(text) {
    setAntialiased(false);
}

SwatchLegendItem::SwatchLegendItem(QCPLegend* legend, const QPen& stroke, const QString& text)
    : QCPAbstractLegendItem(legend), stroke_(stroke), text_(text) {
    setAntialiased(false);
}

void SwatchLegendItem::draw(QCPPainter* painter) {
    const QSize iconSize = mParentLegend->iconSize();
    const QRect icon(mRect.topLeft(), iconSize);
    if (isLine()) {
        // Across the icon's middle, as QCPGraph's own legend icon draws its line.
        painter->setPen(stroke_);
        const double y = icon.top() + icon.height() / 2.0;
        painter->drawLine(QLineF(icon.left(), y, icon.right() + 1, y));
    } else {
        painter->setPen(QPen(QColor(0x50, 0x50, 0x50), 0));
        painter->setBrush(fill_);
        painter->drawRect(icon.adjusted(0, 0, -1, -1));
    }
    if (overlay_.style() != Qt::NoBrush) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(overlay_);
        painter->drawRect(icon.adjusted(1, 1, -1, -1));
    }
    painter->setFont(mSelected ? mSelectedFont : mFont);
    painter->setPen(QPen(mSelected ? mSelectedTextColor : mTextColor));
    const int textLeft = icon.right() + 1 + mParentLegend->iconTextPadding();
    painter->drawText(QRect(textLeft, mRect.top(), mRect.right() - textLeft + 1, iconSize.height()),
                      Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, text_);
}

QSize SwatchLegendItem::minimumOuterSizeHint() const {
    const QFontMetrics metrics(mSelected ? mSelectedFont : mFont);
    const QSize iconSize = mParentLegend->iconSize();
    const int textWidth = metrics.horizontalAdvance(text_);
    QSize size(iconSize.width() + mParentLegend->iconTextPadding() + textWidth,
               std::max(metrics.height(), iconSize.height()));
    size.rwidth() += mMargins.left() + mMargins.right();
    size.rheight() += mMargins.top() + mMargins.bottom();
    return size;
}

}  // namespace mario::views
