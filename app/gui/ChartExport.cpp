#include "app/gui/ChartExport.h"

#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

#include "core/io/ChromeTrace.h"
#include "core/io/PipeliningCsv.h"

namespace mario::gui {

bool exportSchedule(const QString& path, const ComputedSchedule& schedule, QWidget* charts, QString* error,
                    QString* note) {
    const QString lower = path.toLower();
    if (!schedule.ok) {
        *error = QObject::tr("nothing to export yet");
        return false;
    }
    if (lower.endsWith(".csv")) {
        // The window has no flag to ask with: it writes what PyTorch can run and says what went.
        auto written = writePipeliningCsv(schedule.plan, path.toStdString(), {PipeliningCsvFormat::ComputeOnly, true});
        if (!written) *error = QString::fromStdString(written.error().message);
        if (const int dropped = recomputeCount(schedule.plan); written && dropped > 0 && note)
            *note = QObject::tr("%1 recomputations (R) left out: PyTorch's pipelining has no recompute action")
                        .arg(dropped);
        return written.ok();
    }
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
