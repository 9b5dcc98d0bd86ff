// Issue 39's smaller window items, driven with real mouse and key events (offscreen):
// parameters in millions, a tooltip after a zoom, the tuner whole on screen, a switch from unit
// to analytical costs that keeps the micro-batches and says what prices the schedule, and the
// Gantt's time axis aligned with the memory chart's when tall rows bring the lane scroll bar.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScreen>
#include <QScrollBar>
#include <QSpinBox>
#include <QStandardPaths>
#include <QToolTip>
#include <QtTest>
#include <qcustomplot.h>

#include "app/gui/ConfigPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/SummaryPanel.h"
#include "app/gui/TunerPanel.h"
#include "views/GanttView.h"
#include "views/MemoryChart.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");
const QString kFigure2 = kExamples + "/figure2.config.json";

// The window on screen (clicks need real geometry) with `file` open.
bool showFile(MainWindow& window, const QString& file) {
    window.document()->setSynchronous(true);
    window.resize(1400, 900);
    window.show();
    return QTest::qWaitForWindowExposed(&window) && window.openFile(file);
}

}  // namespace

class WindowDetailsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // The small things: cpu-small's parameters in millions; the tooltip of a box under the
    // pointer after W zoomed about it; the tuner whole on the screen.
    void smallThingsReadRight() {
        {  // closed before the next window: tooltips and the pointer are the application's
            MainWindow cpu;
            QVERIFY(showFile(cpu, kExamples + "/cpu-small-measured.config.json"));
            const double parameters = cpu.document()->current().plan.info.model_parameters;
            QVERIFY(parameters > 0 && parameters < 1e9);
            const QString details = cpu.summary()->detailsText();
            QVERIFY2(details.contains(QStringLiteral("%1 million parameters")
                                          .arg(QLocale().toString(parameters / 1e6, 'f', parameters < 1e7 ? 2 : 1))),
                     qPrintable(details));
            QVERIFY(!details.contains("0.00 billion"));
        }

        MainWindow window;
        QVERIFY(showFile(window, kFigure2));
        views::GanttView* gantt = window.gantt();
        QWidget* plot = gantt->plotWidget();
        plot->setFocus();
        const QPoint box = plot->mapFrom(gantt, gantt->boxCenter({1, 0}));
        QTest::mouseMove(plot, box + QPoint(1, 0));
        QTest::mouseMove(plot, box);
        QTRY_VERIFY_WITH_TIMEOUT(QToolTip::isVisible(), 2000);
        QVERIFY2(QToolTip::text().contains("device 1"), qPrintable(QToolTip::text()));
        // W zooms about the pointer: the same box stays under it, and a move shows its tip again.
        QTest::keyClick(plot, Qt::Key_W);
        QTRY_VERIFY_WITH_TIMEOUT(!QToolTip::isVisible(), 2000);
        const QPoint again = plot->mapFrom(gantt, gantt->boxCenter({1, 0}));
        QTest::mouseMove(plot, again + QPoint(1, 0));
        QTRY_VERIFY_WITH_TIMEOUT(QToolTip::isVisible(), 2000);
        QVERIFY2(QToolTip::text().contains("device 1"), qPrintable(QToolTip::text()));

        TunerPanel* tuner = window.tuner();
        tuner->show();
        QVERIFY(QTest::qWaitForWindowExposed(tuner));
        const QRect free = window.screen()->availableGeometry();
        QVERIFY2(free.contains(tuner->frameGeometry()), qPrintable(QStringLiteral("%1,%2 %3x%4 on a %5x%6 screen")
                                                                       .arg(tuner->frameGeometry().x())
                                                                       .arg(tuner->frameGeometry().y())
                                                                       .arg(tuner->frameGeometry().width())
                                                                       .arg(tuner->frameGeometry().height())
                                                                       .arg(free.width())
                                                                       .arg(free.height())));
    }

    // Figure 2 opened after LLaMA-2: the unit-cost config names no model, so the model box shows
    // the first preset, not LLaMA's. 8 micro-batches typed, then analytical costs (arrow up in
    // the costs box): the 8 stay (global batch 8 × 1 × 1) and the panel says what prices it.
    void switchingToAnalyticalCostsKeepsTheMicrobatchesAndSaysWhatPricesThem() {
        MainWindow window;
        QVERIFY(showFile(window, kExamples + "/llama2-13b-1f1b.config.json"));
        QVERIFY(window.openFile(kFigure2));
        const std::string first = window.document()->presets().modelNames().front();
        auto* model = window.configPanel()->findChild<QComboBox*>("model");
        QCOMPARE(model->currentText().toStdString(), first);
        auto* field = window.configPanel()->findChild<QSpinBox*>("microbatches");
        auto* edit = field->findChild<QLineEdit*>();
        QTest::mouseClick(edit, Qt::LeftButton, {}, edit->rect().center());
        QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(edit, "8");
        QTRY_COMPARE_WITH_TIMEOUT(window.document()->state().config->microbatchCount(), 8, 5000);
        QComboBox* costs = window.configPanel()->costsBox();
        QCOMPARE(costs->currentIndex(), 1);  // unit
        costs->setFocus();
        QTest::keyClick(costs, Qt::Key_Up);
        QCOMPARE(costs->currentIndex(), 0);  // analytical
        QTRY_VERIFY_WITH_TIMEOUT(!window.document()->state().config->unit_costs.has_value(), 5000);
        const Config& config = *window.document()->state().config;
        QCOMPARE(config.microbatchCount(), 8);
        QCOMPARE(config.model.name, first);
        auto* noteLabel = window.configPanel()->findChild<QLabel*>("configNote");
        QVERIFY(noteLabel);
        const QString note = noteLabel->text();
        QVERIFY2(note.contains(QString::fromStdString(first)) && note.contains("8 micro-batches"), qPrintable(note));
    }

    // Rows zoomed tall (+) bring the lane scroll bar: the Gantt's time axis still ends where
    // the memory chart's does, pixel for pixel, as it did before.
    void tallRowsKeepTheTimeAxesAligned() {
        MainWindow window;
        QVERIFY(showFile(window, kExamples + "/gpt3-13b-chimera.config.json"));
        QCustomPlot* gantt = window.gantt()->plot();
        QCustomPlot* memory = window.memoryChart()->curvePlot();
        auto rightEdge = [](QCustomPlot* plot) { return plot->mapToGlobal(plot->axisRect()->rect().topRight()).x(); };
        auto leftEdge = [](QCustomPlot* plot) { return plot->mapToGlobal(plot->axisRect()->rect().topLeft()).x(); };
        QTRY_COMPARE(rightEdge(gantt), rightEdge(memory));
        auto* scroll = window.gantt()->findChild<QScrollBar*>("laneScroll");
        QVERIFY(scroll && scroll->isHidden());
        window.gantt()->plotWidget()->setFocus();
        for (int i = 0; i < 6; ++i) QTest::keyClick(window.gantt()->plotWidget(), Qt::Key_Plus);
        QTRY_VERIFY(scroll->isVisible());
        gantt->replot();
        QTRY_COMPARE(rightEdge(gantt), rightEdge(memory));
        QCOMPARE(leftEdge(gantt), leftEdge(memory));
        // The bar lies beside the lanes, inside the plot, and still scrolls them.
        const QRect bar(scroll->mapTo(gantt, QPoint(0, 0)), scroll->size());
        QVERIFY(bar.left() > gantt->axisRect()->rect().right() && bar.right() < gantt->width());
    }
};

QTEST_MAIN(WindowDetailsTest)
#include "window_details_test.moc"
