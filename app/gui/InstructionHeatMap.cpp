#include "app/gui/InstructionHeatMap.h"

#include <QHelpEvent>
#include <QLinearGradient>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "app/gui/LiveMeasurements.h"
#include "core/session/Fidelity.h"
#include "views/PlotStyle.h"

namespace mario::gui {
namespace {

// ColorBrewer's RdBu ends: diverging, and told apart by deuteranopes and protanopes.
const QColor kFaster(0x21, 0x66, 0xAC);
const QColor kSlower(0xB2, 0x18, 0x2B);
const QColor kAsSimulated(0xF7, 0xF7, 0xF7);
const QColor kUnmeasured(0xD0, 0xD0, 0xD0);

QColor mix(const QColor& a, const QColor& b, double t) {
    return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                            static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                            static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

QColor textOn(const QColor& fill) { return fill.lightnessF() < 0.55 ? Qt::white : Qt::black; }

QString ratioText(double ratio) { return QStringLiteral("×%1").arg(ratio, 0, 'f', ratio < 9.995 ? 2 : 1); }

QString ms(double value) { return QStringLiteral("%1 ms").arg(value, 0, 'g', 4); }

}  // namespace

InstructionHeatMap::InstructionHeatMap(const LiveMeasurements* measurements, QWidget* parent)
    : QWidget(parent), measurements_(measurements) {
    setObjectName("instructionHeatMap");
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QColor InstructionHeatMap::colorOf(std::optional<double> ratio) {
    if (!ratio || !(*ratio > 0) || !std::isfinite(*ratio)) return kUnmeasured;
    // On a log scale, so ×2 and ×0.5 are equally far from white.
    const double t = std::clamp(std::log2(*ratio), -1.0, 1.0);
    return t < 0 ? mix(kAsSimulated, kFaster, -t) : mix(kAsSimulated, kSlower, t);
}

InstructionHeatMap::Geometry InstructionHeatMap::geometry() const {
    Geometry g;
    const int devices = static_cast<int>(measurements_->plan().devices.size());
    g.left = views::kPlotLeftMargin;
    g.right = width() - kRightMargin;
    g.top = kLegendHeight + 4;
    g.bottom = height() - 4;
    g.rowHeight = devices > 0 ? (g.bottom - g.top) / devices : 0;
    // The Gantt's fit: the step with 1% of air on each side.
    const double makespan = measurements_->simulatedMakespan();
    g.lower = upper_ > lower_ ? lower_ : -0.01 * makespan;
    const double upper = upper_ > lower_ ? upper_ : 1.01 * makespan;
    g.scale = upper > g.lower ? (g.right - g.left) / (upper - g.lower) : 0;
    return g;
}

void InstructionHeatMap::setTimeRange(double lower, double upper) {
    lower_ = lower;
    upper_ = upper;
    update();
}

bool InstructionHeatMap::drawsBox(int device, int index) const {
    const auto& program = measurements_->plan().devices[static_cast<std::size_t>(device)].program;
    return isCompute(program[static_cast<std::size_t>(index)].op) &&
           measurements_->simulatedDuration(device, index) > 0;
}

QRectF InstructionHeatMap::boxRect(int device, int index) const {
    const auto& devices = measurements_->plan().devices;
    if (device < 0 || device >= static_cast<int>(devices.size())) return {};
    if (index < 0 || index >= static_cast<int>(devices[static_cast<std::size_t>(device)].program.size())) return {};
    return boxRect(geometry(), device, index);
}

QRectF InstructionHeatMap::boxRect(const Geometry& g, int device, int index) const {
    if (!drawsBox(device, index)) return {};
    const InstructionTiming t = measurements_->simulatedTiming(device, index);
    const double x0 = g.left + (t.start - g.lower) * g.scale, x1 = g.left + (t.end - g.lower) * g.scale;
    if (x1 < g.left || x0 > g.right) return {};  // outside the visible range
    const double y = g.top + device * g.rowHeight;
    // At least 2 px wide, so a short OPT still shows its colour; 12% of the row as air.
    return QRectF(x0, y + 0.12 * g.rowHeight, std::max(x1 - x0, 2.0), 0.76 * g.rowHeight);
}

std::optional<std::pair<int, int>> InstructionHeatMap::instructionAt(const QPointF& pos) const {
    const Geometry g = geometry();
    if (g.rowHeight <= 0 || pos.y() < g.top || pos.y() >= g.bottom) return std::nullopt;
    const int device = static_cast<int>((pos.y() - g.top) / g.rowHeight);
    const auto& devices = measurements_->plan().devices;
    if (device < 0 || device >= static_cast<int>(devices.size())) return std::nullopt;
    const auto& program = devices[static_cast<std::size_t>(device)].program;
    for (int i = 0; i < static_cast<int>(program.size()); ++i)
        if (boxRect(g, device, i).adjusted(-1, 0, 1, 0).contains(pos)) return std::make_pair(device, i);
    return std::nullopt;
}

QString InstructionHeatMap::tooltipFor(int device, int index) const {
    const auto& ins =
        measurements_->plan().devices[static_cast<std::size_t>(device)].program[static_cast<std::size_t>(index)];
    QString text = tr("<b>%1</b> on device %2<br>simulated %3")
                       .arg(QString::fromStdString(toActionString(ins)))
                       .arg(device)
                       .arg(ms(measurements_->simulatedDuration(device, index)));
    const auto measured = measurements_->medianDuration(device, index);
    const auto ratio = measurements_->ratio(device, index);
    if (!measured || !ratio) return text + tr("<br>not measured yet");
    const int n = measurements_->samples(device, index);
    const QString over = measurements_->warmupOnly() ? tr("the warm-up")
                         : n == 1                    ? tr("1 iteration")
                                                     : tr("median of %1 iterations").arg(n);
    return text +
           tr("<br>measured %1 (%2)<br>%3 the simulated time; simulation error %4%")
               .arg(ms(*measured), over, ratioText(*ratio),
                    QString::asprintf(
                        "%+.1f", 100 * simulationError(measurements_->simulatedDuration(device, index), *measured)));
}

QString InstructionHeatMap::legendText() const {
    const auto& iterations = measurements_->iterations();
    if (iterations.empty()) return tr("measured ÷ simulated per instruction: waiting for the first iteration");
    if (measurements_->warmupOnly())
        return tr("measured ÷ simulated, iteration 1 (the warm-up; later ones replace it)");
    return tr("measured ÷ simulated, median of iterations 2–%1 (1 is the warm-up)").arg(iterations.size());
}

void InstructionHeatMap::paintLegend(QPainter& painter) const {
    const QFontMetrics fm = fontMetrics();
    const QColor ink = palette().color(QPalette::WindowText);
    auto text = [&](double x, const QString& words) {
        painter.setPen(ink);
        painter.drawText(QRectF(x, 0, fm.horizontalAdvance(words) + 2, kLegendHeight), Qt::AlignVCenter, words);
        return x + fm.horizontalAdvance(words) + 2;
    };
    const double y = 5, h = kLegendHeight - 10;
    double x = text(views::kPlotLeftMargin, legendText()) + 16;
    // The scale, log-spaced as the colours are: ×0.5 (faster) … ×1 … ×2 (slower).
    x = text(x, tr("faster ×0.5")) + 4;
    const double width = 160;
    QLinearGradient gradient(x, 0, x + width, 0);
    gradient.setColorAt(0, kFaster);
    gradient.setColorAt(0.5, kAsSimulated);
    gradient.setColorAt(1, kSlower);
    painter.fillRect(QRectF(x, y, width, h), gradient);
    painter.setPen(QColor(0x80, 0x80, 0x80));
    painter.drawRect(QRectF(x, y, width, h));
    painter.setPen(ink);
    painter.drawText(QRectF(x, y, width, h), Qt::AlignCenter, QStringLiteral("×1"));
    x = text(x + width + 4, tr("×2 slower")) + 16;
    painter.fillRect(QRectF(x, y, 2 * h, h), kUnmeasured);
    text(x + 2 * h + 6, tr("not measured"));
}

void InstructionHeatMap::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    paintLegend(painter);
    const Geometry g = geometry();
    const auto& devices = measurements_->plan().devices;
    const QFontMetrics fm = fontMetrics();
    painter.setClipRect(QRectF(0, g.top, g.right + 1, g.bottom - g.top));
    for (int d = 0; d < static_cast<int>(devices.size()); ++d) {
        const double y = g.top + d * g.rowHeight;
        if (d % 2) painter.fillRect(QRectF(0, y, width(), g.rowHeight), QColor(0xF2, 0xF2, 0xF2));
        // Every label when rows are tall enough, else every k-th.
        const int every = std::max(1, static_cast<int>(std::ceil((fm.height() + 2) / std::max(g.rowHeight, 1.0))));
        if (d % every == 0) {
            painter.setPen(palette().color(QPalette::WindowText));
            painter.drawText(QRectF(4, y, g.left - 12, g.rowHeight), Qt::AlignRight | Qt::AlignVCenter,
                             tr("device %1").arg(d));
        }
        const auto& program = devices[static_cast<std::size_t>(d)].program;
        for (int i = 0; i < static_cast<int>(program.size()); ++i) {
            const QRectF box = boxRect(g, d, i).intersected(QRectF(g.left, y, g.right - g.left, g.rowHeight));
            if (box.isEmpty()) continue;
            const auto ratio = measurements_->ratio(d, i);
            const QColor fill = colorOf(ratio);
            painter.fillRect(box, fill);
            painter.setPen(QPen(QColor(0x70, 0x70, 0x70), 0));
            painter.drawRect(box);
            if (!ratio) continue;
            // "1F3 ×1.23" when it fits, else the ratio alone.
            const QString both = QStringLiteral("%1 %2").arg(
                QString::fromStdString(toActionString(program[static_cast<std::size_t>(i)])), ratioText(*ratio));
            const QString label = fm.horizontalAdvance(both) + 6 <= box.width() ? both : ratioText(*ratio);
            if (fm.horizontalAdvance(label) + 4 > box.width() || fm.height() > box.height() + 2) continue;
            painter.setPen(textOn(fill));
            painter.drawText(box, Qt::AlignCenter, label);
        }
    }
}

bool InstructionHeatMap::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (auto hit = instructionAt(help->pos()))
            QToolTip::showText(help->globalPos(), tooltipFor(hit->first, hit->second), this);
        else QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

}  // namespace mario::gui
