#include "views/DeviceGradientLegendItem.h"

#include <algorithm>
#include <array>

namespace mario::views {

QColor deviceColor(int device, int devices) {
    static constexpr std::array<QRgb, 5> anchors{qRgb(0x44, 0x01, 0x54), qRgb(0x3B, 0x52, 0x8B), qRgb(0x21, 0x90, 0x8C),
                                                 qRgb(0x5D, 0xC8, 0x63), qRgb(0xA8, 0xC8, 0x1A)};
    const double t = devices > 1 ? static_cast<double>(device) / (devices - 1) : 0.0;
    const double scaled = std::clamp(t, 0.0, 1.0) * (anchors.size() - 1);
    const auto i = std::min(static_cast<std::size_t>(scaled), anchors.size() - 2);
    const double f = scaled - i;
    const QColor a = QColor::fromRgb(anchors[i]), b = QColor::fromRgb(anchors[i + 1]);
    return QColor::fromRgbF(a.redF() + f * (b.redF() - a.redF()), a.greenF() + f * (b.greenF() - a.greenF()),
                            a.blueF() + f * (b.blueF() - a.blueF()));
}

DeviceGradientLegendItem::DeviceGradientLegendItem(QCPLegend* legend, int devices)
    : QCPAbstractLegendItem(legend), devices_(std::max(1, devices)) {}

QString DeviceGradientLegendItem::firstLabel() const { return QStringLiteral("device 0"); }

QString DeviceGradientLegendItem::lastLabel() const { return QStringLiteral("device %1").arg(devices_ - 1); }

void DeviceGradientLegendItem::draw(QCPPainter* painter) {
    const QFontMetrics metrics(mFont);
    const int height = mParentLegend->iconSize().height();
    const QRect row(mRect.left(), mRect.top(), mRect.width(), std::max(height, metrics.height()));
    painter->setFont(mFont);
    painter->setPen(QPen(mTextColor));
    const int firstWidth = metrics.horizontalAdvance(firstLabel());
    painter->drawText(QRect(row.left(), row.top(), firstWidth, row.height()), Qt::AlignLeft | Qt::AlignVCenter,
                      firstLabel());
    const int gap = mParentLegend->iconTextPadding();
    const QRect strip(row.left() + firstWidth + gap, row.center().y() - height / 2, kStripWidth, height);
    // One band per device (blended only past a band per pixel), so a reader can count them.
    QLinearGradient gradient(strip.topLeft(), strip.topRight());
    // At most one band per pixel: QGradient keeps its stops sorted, so one stop per device
    // of 65 536 made every repaint quadratic (seconds).
    const int bands = std::min(devices_, kStripWidth);
    for (int b = 0; b < bands; ++b) {
        const double from = static_cast<double>(b) / bands, to = static_cast<double>(b + 1) / bands;
        const QColor color = deviceColor(static_cast<int>(static_cast<long long>(b) * devices_ / bands), devices_);
        gradient.setColorAt(from, color);
        gradient.setColorAt(std::max(from, to - 1e-6), color);
    }
    painter->setPen(QPen(QColor(0x50, 0x50, 0x50), 0));
    painter->setBrush(gradient);
    painter->drawRect(strip.adjusted(0, 0, -1, -1));
    painter->setPen(QPen(mTextColor));
    painter->drawText(
        QRect(strip.right() + 1 + gap, row.top(), metrics.horizontalAdvance(lastLabel()) + 1, row.height()),
        Qt::AlignLeft | Qt::AlignVCenter, lastLabel());
}

QSize DeviceGradientLegendItem::minimumOuterSizeHint() const {
    const QFontMetrics metrics(mFont);
    const int gap = mParentLegend->iconTextPadding();
    QSize size(metrics.horizontalAdvance(firstLabel()) + gap + kStripWidth + gap +
                   metrics.horizontalAdvance(lastLabel()) + 1,
               std::max(metrics.height(), mParentLegend->iconSize().height()));
    size.rwidth() += mMargins.left() + mMargins.right();
    size.rheight() += mMargins.top() + mMargins.bottom();
    return size;
}

}  // namespace mario::views
