#include "app/gui/ChartExport.h"

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
    if (lower.endsWith(".png")) {
        if (charts->grab().save(path, "PNG")) return true;
        *error = path + QObject::tr(": cannot write the image");
        return false;
    }
    if (lower.endsWith(".svg")) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(charts->size());
        svg.setViewBox(QRect(QPoint(0, 0), charts->size()));
        svg.setTitle(QString::fromStdString(schedule.plan.info.name));
        QPainter painter;
        if (!painter.begin(&svg)) {
            *error = path + QObject::tr(": cannot write the SVG");
            return false;
        }
        charts->render(&painter);
        return painter.end();
    }
    if (lower.endsWith(".pdf")) {
        QPdfWriter pdf(path);
        pdf.setPageSize(QPageSize(QSizeF(charts->width(), charts->height()), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setResolution(72);
        QPainter painter;
        if (!painter.begin(&pdf)) {
            *error = path + QObject::tr(": cannot write the PDF");
            return false;
        }
        charts->render(&painter);
        return painter.end();
    }
    *error = path + QObject::tr(": unknown export format (use .png, .svg, .pdf, .json or .csv)");
    return false;
}

}  // namespace mario::gui
