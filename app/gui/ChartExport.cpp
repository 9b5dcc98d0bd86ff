#include "app/gui/ChartExport.h"

#include <QBuffer>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QPixmap>
#include <QStringList>
#include <QSvgGenerator>
#include <QWidget>

#include "core/io/ChromeTrace.h"
#include "core/io/PipeliningCsv.h"
#include "core/io/TextFile.h"
#include "core/io/TorchtitanSettings.h"
#include "core/session/RecomputeFreeOrder.h"

namespace mario::gui {

namespace {

// The order without recomputation (PyTorch has none), as `mario export --csv --drop-recompute`
// writes it, and the torchtitan settings beside it.
bool exportCsv(const QString& path, const ScheduleInput& input, const ComputedSchedule& schedule, QString* error,
               QString* note) {
    auto order = recomputeFreeOrder(input, schedule);
    if (!order) {
        *error = QString::fromStdString(order.error().message);
        return false;
    }
    auto written = writePipeliningCsv(order->plan, path.toStdString(), {PipeliningCsvFormat::ComputeOnly, true});
    if (!written) {
        *error = QString::fromStdString(written.error().message);
        return false;
    }
    QStringList said;
    if (order->dropped > 0) said << QString::fromStdString(order->summary());
    if (auto settings = torchtitanSettings(order->plan)) {
        const std::string argsPath = torchtitanArgsPath(path.toStdString());
        if (writeTextFile(argsPath, torchtitanArgsFile(*settings, path.toStdString()), "the torchtitan settings"))
            said << QObject::tr("torchtitan settings in %1").arg(QString::fromStdString(argsPath));
    }
    if (note) *note = said.join(QStringLiteral("; "));
    return true;
}

bool refuse(const QString& path, const QString& kind, QString* error) {
    *error = path + QObject::tr(": cannot render %1").arg(kind);
    return false;
}

}  // namespace

bool exportSchedule(const QString& path, const ScheduleInput& input, const ComputedSchedule& schedule, QWidget* charts,
                    QString* error, QString* note) {
    const QString lower = path.toLower();
    if (!schedule.ok) {
        *error = QObject::tr("nothing to export yet");
        return false;
    }
    // The window has no flag to ask with: it writes what PyTorch can run and says what went.
    if (lower.endsWith(".csv")) return exportCsv(path, input, schedule, error, note);
    if (lower.endsWith(".json")) {
        auto written = writeChromeTrace(schedule.plan, schedule.result, path.toStdString());
        if (!written) *error = QString::fromStdString(written.error().message);
        return written.ok();
    }
    return exportChartImage(path, charts, QString::fromStdString(schedule.plan.info.name), error);
}

bool exportChartImage(const QString& path, QWidget* charts, const QString& title, QString* error) {
    const QString lower = path.toLower();
    // Images are rendered into memory and written by core's one writer, like every other
    // output: a link stays a link, a device is written through, a failed write keeps the old file.
    QBuffer image;
    image.open(QIODevice::WriteOnly);
    QString kind;
    if (lower.endsWith(".png")) {
        kind = QObject::tr("the image");
        if (!charts->grab().save(&image, "PNG")) return refuse(path, kind, error);
    } else if (lower.endsWith(".svg")) {
        kind = QObject::tr("the SVG");
        QSvgGenerator svg;
        svg.setOutputDevice(&image);
        svg.setSize(charts->size());
        svg.setViewBox(QRect(QPoint(0, 0), charts->size()));
        svg.setTitle(title);
        QPainter painter;
        if (!painter.begin(&svg)) return refuse(path, kind, error);
        charts->render(&painter);
        if (!painter.end()) return refuse(path, kind, error);
    } else if (lower.endsWith(".pdf")) {
        kind = QObject::tr("the PDF");
        QPdfWriter pdf(&image);
        pdf.setPageSize(QPageSize(QSizeF(charts->width(), charts->height()), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setResolution(72);
        QPainter painter;
        if (!painter.begin(&pdf)) return refuse(path, kind, error);
        charts->render(&painter);
        if (!painter.end()) return refuse(path, kind, error);
    } else {
        *error = path + QObject::tr(": unknown export format (use .png, .svg, .pdf, .json or .csv)");
        return false;
    }
    const QByteArray& bytes = image.data();
    auto written =
        writeTextFile(path.toStdString(), std::string_view(bytes.constData(), bytes.size()), kind.toStdString());
    if (!written) *error = QString::fromStdString(written.error().message);
    return written.ok();
}

}  // namespace mario::gui
